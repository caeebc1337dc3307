import {
  adxSeries,
  atrSeries,
  bollingerSeries,
  emaSeries,
  macdSeries,
  obvSeries,
  rsiSeries,
  smaSeries,
  stochasticSeries,
  vwapSeries,
} from '@tda/charts';
import type { IndicatorName, IndicatorPoint, IndicatorResult, OhlcvCandle } from '@tda/contracts';
import { INDICATOR_CATALOGUE } from '@tda/flow-engine';

/** One indicator to compute: a catalogue name with every parameter (the step's inputs). */
export interface IndicatorRequestItem {
  name: IndicatorName;
  params: Record<string, number>;
}

type Params = Readonly<Record<string, number>>;
type Row = Readonly<Record<string, number | null>> | null;

/** How one catalogue indicator is computed and described. */
interface IndicatorMethod {
  fields: readonly string[];
  /** Candles before every field has a value (the first complete point is at index n − 1). */
  required(p: Params): number;
  method: string;
  compute(candles: readonly OhlcvCandle[], closes: readonly number[], p: Params): Row[];
}

const at = (p: Params, key: string): number => p[key] ?? Number.NaN;
const single = (series: readonly (number | null)[]): Row[] =>
  series.map((value) => (value === null ? null : { value }));

/** The catalogue's indicators (libs/flow-engine dynamic/indicator-catalogue.ts), computed with @tda/charts. */
export const INDICATOR_METHODS: Readonly<Record<IndicatorName, IndicatorMethod>> = {
  RSI: {
    fields: ['value'],
    required: (p) => at(p, 'period') + 1,
    method:
      "Wilder's RSI of closes (0..100): average gain and loss seeded with their mean over the first period changes, then Wilder smoothing.",
    compute: (_, closes, p) => single(rsiSeries(closes, at(p, 'period'))),
  },
  MACD: {
    fields: ['macd', 'signal', 'histogram'],
    required: (p) => at(p, 'slow') + at(p, 'signal') - 1,
    method:
      'EMA(fast) − EMA(slow) of closes; signal = EMA(signal) of MACD; histogram = MACD − signal. Each EMA is seeded with its first input.',
    compute: (_, closes, p) =>
      macdSeries(closes, at(p, 'fast'), at(p, 'slow'), at(p, 'signal')).map((point) =>
        point === null ? null : { ...point },
      ),
  },
  ATR: {
    fields: ['value'],
    required: (p) => at(p, 'period'),
    method:
      "Wilder's average true range in quote currency: the mean of the first period true ranges (the first candle's is high − low), then Wilder smoothing.",
    compute: (candles, _, p) => single(atrSeries(candles, at(p, 'period'))),
  },
  BOLLINGER: {
    fields: ['upper', 'middle', 'lower'],
    required: (p) => at(p, 'period'),
    method:
      'SMA(period) of closes ± stdDev × the population standard deviation of the same closes.',
    compute: (_, closes, p) =>
      bollingerSeries(closes, at(p, 'period'), at(p, 'stdDev')).map((band) =>
        band === null ? null : { upper: band.upper, middle: band.middle, lower: band.lower },
      ),
  },
  EMA: {
    fields: ['value'],
    required: (p) => at(p, 'period'),
    method:
      'Exponential moving average of closes, k = 2 / (period + 1), seeded with the first close of the window; shown from the period-th candle.',
    compute: (_, closes, p) => single(emaSeries(closes, at(p, 'period'))),
  },
  SMA: {
    fields: ['value'],
    required: (p) => at(p, 'period'),
    method: 'Simple moving average: the mean of the last period closes.',
    compute: (_, closes, p) => single(smaSeries(closes, at(p, 'period'))),
  },
  STOCHASTIC: {
    fields: ['k', 'd'],
    required: (p) => at(p, 'k') + at(p, 'd') - 1,
    method:
      'Fast stochastic (0..100): %K = 100 × (close − lowest low) / (highest high − lowest low) over k candles, %D = SMA(d) of %K.',
    compute: (candles, _, p) =>
      stochasticSeries(candles, at(p, 'k'), at(p, 'd')).map((s) =>
        s === null ? null : { k: s.k, d: s.d },
      ),
  },
  ADX: {
    fields: ['adx', 'plusDI', 'minusDI'],
    required: (p) => 2 * at(p, 'period'),
    method:
      "Wilder's ADX (trend strength, 0..100) with +DI and −DI (direction): Wilder smoothing of true range and directional movement, ADX = Wilder smoothing of DX.",
    compute: (candles, _, p) =>
      adxSeries(candles, at(p, 'period')).map((a) =>
        a === null ? null : { adx: a.adx, plusDI: a.plusDI, minusDI: a.minusDI },
      ),
  },
  OBV: {
    fields: ['value'],
    required: () => 2,
    method:
      'On-balance volume cumulated from window.from (0 there): + volume on a higher close, − volume on a lower one; its slope matters, not its level.',
    compute: (candles) => single(obvSeries(candles)),
  },
  VWAP: {
    fields: ['value'],
    required: () => 1,
    method:
      'Volume-weighted average price anchored at window.from (the first candle of the export window, not a session): Σ typical price × volume / Σ volume, typical price = (high + low + close) / 3.',
    compute: (candles) => single(vwapSeries(candles)),
  },
};

/** The catalogue's parameter order (stable bytes, readable labels). */
function orderedParams(item: IndicatorRequestItem): Record<string, number> {
  const names = Object.keys(INDICATOR_CATALOGUE[item.name]?.params ?? {});
  return Object.fromEntries(names.map((name) => [name, item.params[name] ?? Number.NaN]));
}

/** RSI(14), MACD(12,26,9), BOLLINGER(20,2), VWAP. */
export function indicatorLabel(item: IndicatorRequestItem): string {
  const values = Object.values(orderedParams(item));
  return values.length === 0 ? item.name : `${item.name}(${values.join(',')})`;
}

/** 8 significant digits: far below any reading's meaning, and compact. */
function round(value: number): number {
  const rounded = Number(value.toPrecision(8));
  return rounded === 0 ? 0 : rounded;
}

function pointOf(candle: OhlcvCandle, row: Row, fields: readonly string[]): IndicatorPoint | null {
  if (row === null) return null;
  const values: Record<string, number> = {};
  for (const field of fields) {
    const value = row[field];
    if (value === null || value === undefined || !Number.isFinite(value)) return null;
    values[field] = round(value);
  }
  return { openTime: candle.openTime, values };
}

/**
 * One requested indicator on the window's candles: its latest point (at the last candle) and the
 * last `tailLength` complete points; `insufficient_data` with a reason when the window is
 * shorter than its warm-up or it has no value at the last candle (VWAP without any volume).
 */
export function indicatorResult(
  item: IndicatorRequestItem,
  candles: readonly OhlcvCandle[],
  tailLength: number,
): IndicatorResult {
  const definition = INDICATOR_METHODS[item.name];
  const params = orderedParams(item);
  const requiredCandles = definition.required(params);
  const head = {
    name: item.name,
    params,
    label: indicatorLabel(item),
    method: definition.method,
    fields: [...definition.fields] as [string, ...string[]],
    requiredCandles,
  };
  const insufficient = (reason: string): IndicatorResult => ({
    ...head,
    status: 'insufficient_data',
    latest: null,
    tail: [],
    reason,
  });
  if (candles.length < requiredCandles) {
    return insufficient(
      `needs ${requiredCandles} complete candles, the window has ${candles.length}`,
    );
  }
  const closes = candles.map((c) => c.close);
  const rows = definition.compute(candles, closes, params);
  const points = rows.map((row, i) => {
    const candle = candles[i];
    return candle === undefined ? null : pointOf(candle, row, definition.fields);
  });
  const latest = points.at(-1) ?? null;
  if (latest === null) return insufficient('no value at the last complete candle');
  const tail = points.filter((p): p is IndicatorPoint => p !== null).slice(-tailLength);
  return { ...head, status: 'ok', latest, tail };
}
