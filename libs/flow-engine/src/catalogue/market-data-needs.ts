import type { FlowRun, Timeframe } from '@tda/contracts';
import { isTimeframe } from '../ids';
import type { MarketDataNeed } from './flow-definition';

/** When a run reads no candles (an aggregated report), its asOf still describes the symbol. */
const FALLBACK_TIMEFRAMES: readonly Timeframe[] = ['1h'];

/**
 * The market data a run needs, from its OHLCV_EXPORT and BACKTEST steps (their inputs, else the run's symbol
 * and the step's timeframe), deduplicated, in step order. A run without OHLCV steps needs the
 * scope's timeframes (else 1h) of its symbol, so the default asOf is still "the newest complete
 * candle" of that symbol. The orchestrator checks them against the source's coverage at trigger.
 */
export function marketDataNeeds(run: Pick<FlowRun, 'scope' | 'steps'>): MarketDataNeed[] {
  const needs = new Map<string, MarketDataNeed>();
  const add = (symbol: string, timeframe: Timeframe): void => {
    needs.set(`${symbol}\u0000${timeframe}`, { symbol, timeframe });
  };
  for (const stepId of Object.keys(run.steps).sort()) {
    const step = run.steps[stepId];
    // The steps that read candles themselves: OHLCV exports and backtests.
    if (step?.stepType !== 'OHLCV_EXPORT' && step?.stepType !== 'BACKTEST') continue;
    const symbol: unknown = step.inputs['symbol'];
    const timeframe: unknown = step.inputs['timeframe'] ?? step.timeframe;
    if (!isTimeframe(timeframe)) continue;
    add(typeof symbol === 'string' ? symbol : run.scope.symbol, timeframe);
  }
  if (needs.size === 0) {
    for (const timeframe of run.scope.timeframes ?? FALLBACK_TIMEFRAMES) {
      add(run.scope.symbol, timeframe);
    }
  }
  return [...needs.values()];
}
