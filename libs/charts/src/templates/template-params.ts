import { z } from 'zod';

/*
 * Param building blocks shared by the templates. Bounds keep a request from asking for a chart
 * that cannot be drawn or read (a 5000-bar EMA on 60 bars is legal but useless; 0 is an error).
 */
export const periodParam = z.number().int().min(2).max(500);

export const emaPeriodsParam = z.array(periodParam).max(3);

export const bollingerParam = z.strictObject({
  period: periodParam.default(20),
  multiplier: z.number().min(0.5).max(5).default(2),
});

export const rsiShape = {
  period: periodParam.default(14),
  overbought: z.number().min(50).max(100).default(70),
  oversold: z.number().min(0).max(50).default(30),
};

export const macdShape = {
  fast: periodParam.default(12),
  slow: periodParam.default(26),
  signal: periodParam.default(9),
};

export function fastBelowSlow(macd: { fast: number; slow: number }): boolean {
  return macd.fast < macd.slow;
}

export function oversoldBelowOverbought(rsi: { oversold: number; overbought: number }): boolean {
  return rsi.oversold < rsi.overbought;
}

/** 'auto' = log when the shown bars span 10x or more (see resolvePriceScale). */
export const priceScaleParam = z.enum(['auto', 'linear', 'log']).default('auto');
