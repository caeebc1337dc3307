import { EMA, MACD, RSI } from 'trading-signals';

/**
 * The numbers behind the offline analyst's report: trend (EMA fast/slow, slope, close vs EMAs),
 * momentum (RSI 14, MACD 12/26/9), volatility (ATR 14, stdev of returns), support/resistance
 * (swing pivots clustered by distance, plus the EMAs as dynamic levels). Pure and
 * deterministic; indicators are computed on complete candles only (a still-forming last candle
 * is reported separately, never treated as confirmed).
 */

export interface AnalysisCandle {
  openTime: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

export type TrendDirection = 'bullish' | 'bearish' | 'sideways';
export type TrendStrength = 'weak' | 'moderate' | 'strong';

export interface EmaReading {
  period: number;
  value: number;
  /** % change of the EMA over the last `SLOPE_BARS` bars. */
  slopePct: number;
  /** Absolute change of the EMA over the last `SLOPE_BARS` bars. */
  change: number;
}

export type LevelOrigin = 'swing_high' | 'swing_low' | 'period_high' | 'period_low' | 'ema';

export interface PriceLevel {
  price: number;
  strength: 'minor' | 'major';
  /** Candles whose swing high/low fell into this level's cluster (0 for an EMA level). */
  touches: number;
  origin: LevelOrigin;
  /** openTime of the most recent swing of the cluster (or the EMA name). */
  label: string;
}

export interface MarketAnalysis {
  candleCount: number;
  first: AnalysisCandle;
  last: AnalysisCandle;
  /** The still-forming last candle, when the export kept it (complete: false). */
  forming?: AnalysisCandle;
  periodHigh: { price: number; openTime: string };
  periodLow: { price: number; openTime: string };
  /** % change of the close from the first to the last complete candle. */
  changePct: number;
  /** % change over the last min(10, n-1) candles. */
  recentChangePct: number;
  emaFast: EmaReading | null;
  emaSlow: EmaReading | null;
  trend: { direction: TrendDirection; strength: TrendStrength; score: number };
  rsi: number | null;
  macd: { macd: number; signal: number; histogram: number } | null;
  atr: { value: number; pct: number } | null;
  returnsStdevPct: number | null;
  supports: PriceLevel[];
  resistances: PriceLevel[];
}

export const SLOPE_BARS = 5;
const MAX_LEVELS = 3;

function emaSeries(closes: readonly number[], period: number): (number | null)[] {
  const ema = new EMA(period);
  return closes.map((close) => {
    const value = ema.add(close);
    return ema.isStable ? value : null;
  });
}

function emaReading(closes: readonly number[], period: number | null): EmaReading | null {
  if (period === null || closes.length < period + SLOPE_BARS) return null;
  const series = emaSeries(closes, period);
  const value = series[series.length - 1];
  const before = series[series.length - 1 - SLOPE_BARS];
  if (value === null || value === undefined || before === null || before === undefined) return null;
  return { period, value, slopePct: ((value - before) / before) * 100, change: value - before };
}

/** EMA periods that the history can carry: 20/50 normally, shorter on short histories. */
export function emaPeriods(count: number): { fast: number | null; slow: number | null } {
  if (count >= 60) return { fast: 20, slow: 50 };
  if (count >= 30) return { fast: 9, slow: 21 };
  if (count >= 15) return { fast: 9, slow: null };
  return { fast: null, slow: null };
}

function lastRsi(closes: readonly number[], period = 14): number | null {
  if (closes.length <= period) return null;
  const rsi = new RSI(period);
  let value: number | null = null;
  for (const close of closes) value = rsi.add(close);
  return value;
}

function lastMacd(closes: readonly number[]): MarketAnalysis['macd'] {
  if (closes.length < 26 + 9) return null;
  const macd = new MACD(new EMA(12), new EMA(26), new EMA(9));
  let value: { macd: number; signal: number; histogram: number } | null = null;
  for (const close of closes) value = macd.add(close);
  if (value === null || !macd.signal.isStable) return null;
  return { macd: value.macd, signal: value.signal, histogram: value.histogram };
}

/** Wilder's ATR. */
function lastAtr(candles: readonly AnalysisCandle[], period = 14): number | null {
  if (candles.length <= period) return null;
  const ranges: number[] = [];
  for (let i = 1; i < candles.length; i += 1) {
    const c = candles[i];
    const prev = candles[i - 1];
    if (c === undefined || prev === undefined) continue;
    ranges.push(
      Math.max(c.high - c.low, Math.abs(c.high - prev.close), Math.abs(c.low - prev.close)),
    );
  }
  if (ranges.length < period) return null;
  let atr = ranges.slice(0, period).reduce((a, b) => a + b, 0) / period;
  for (const range of ranges.slice(period)) atr = (atr * (period - 1) + range) / period;
  return atr;
}

function returnsStdevPct(closes: readonly number[]): number | null {
  const returns: number[] = [];
  for (let i = 1; i < closes.length; i += 1) {
    const prev = closes[i - 1];
    const close = closes[i];
    if (prev !== undefined && close !== undefined && prev > 0) returns.push(close / prev - 1);
  }
  if (returns.length < 2) return null;
  const mean = returns.reduce((a, b) => a + b, 0) / returns.length;
  const variance = returns.reduce((a, r) => a + (r - mean) ** 2, 0) / (returns.length - 1);
  return Math.sqrt(variance) * 100;
}

interface Pivot {
  price: number;
  openTime: string;
  index: number;
}

/** Swing highs/lows: the extreme of a window of `k` candles on each side. */
function pivots(candles: readonly AnalysisCandle[], k: number, side: 'high' | 'low'): Pivot[] {
  const found: Pivot[] = [];
  const value = (c: AnalysisCandle): number => (side === 'high' ? c.high : c.low);
  const beats = (a: number, b: number, strict: boolean): boolean =>
    side === 'high' ? (strict ? a > b : a >= b) : strict ? a < b : a <= b;
  for (let i = k; i < candles.length - k; i += 1) {
    const candle = candles[i];
    if (candle === undefined) continue;
    const v = value(candle);
    let isPivot = true;
    for (let j = i - k; j <= i + k && isPivot; j += 1) {
      const other = candles[j];
      if (j === i || other === undefined) continue;
      // left side may tie (plateau start), right side must be beaten: one pivot per plateau
      isPivot = j < i ? beats(v, value(other), false) : beats(v, value(other), true);
    }
    if (isPivot) found.push({ price: v, openTime: candle.openTime, index: i });
  }
  return found;
}

interface Candidate {
  price: number;
  origin: LevelOrigin;
  label: string;
  index: number;
}

/** Groups candidates closer than `tolerance`; each group keeps its most recent swing's price. */
function cluster(candidates: readonly Candidate[], tolerance: number): PriceLevel[] {
  const sorted = [...candidates].sort((a, b) => a.price - b.price || a.index - b.index);
  const groups: Candidate[][] = [];
  for (const candidate of sorted) {
    const group = groups[groups.length - 1];
    const anchor = group?.[0];
    if (
      group !== undefined &&
      anchor !== undefined &&
      candidate.price - anchor.price <= tolerance
    ) {
      group.push(candidate);
    } else {
      groups.push([candidate]);
    }
  }
  return groups.map((group) => {
    const extreme = group.find((c) => c.origin === 'period_high' || c.origin === 'period_low');
    const swings = group.filter((c) => c.origin === 'swing_high' || c.origin === 'swing_low');
    const recent = [...swings].sort((a, b) => b.index - a.index)[0];
    const representative = extreme ?? recent ?? group[0];
    const touches = swings.length;
    return {
      price: representative?.price ?? 0,
      origin: representative?.origin ?? 'ema',
      label: representative?.label ?? '',
      touches,
      strength: extreme !== undefined || touches >= 2 ? 'major' : 'minor',
    };
  });
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function analyseCandles(
  all: readonly (AnalysisCandle & { complete?: boolean })[],
): MarketAnalysis {
  const lastRaw = all[all.length - 1];
  const forming = lastRaw !== undefined && lastRaw.complete === false ? lastRaw : undefined;
  const candles: AnalysisCandle[] = (forming === undefined ? all : all.slice(0, -1)).map((c) => ({
    openTime: c.openTime,
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
    volume: c.volume,
  }));
  const first = candles[0];
  const last = candles[candles.length - 1];
  if (first === undefined || last === undefined) {
    throw new RangeError('analyseCandles needs at least one complete candle');
  }
  const closes = candles.map((c) => c.close);
  const n = candles.length;

  let periodHigh = { price: first.high, openTime: first.openTime };
  let periodLow = { price: first.low, openTime: first.openTime };
  for (const c of candles) {
    if (c.high > periodHigh.price) periodHigh = { price: c.high, openTime: c.openTime };
    if (c.low < periodLow.price) periodLow = { price: c.low, openTime: c.openTime };
  }
  const changePct = ((last.close - first.close) / first.close) * 100;
  const recentBase = candles[Math.max(0, n - 1 - 10)] ?? first;
  const recentChangePct = ((last.close - recentBase.close) / recentBase.close) * 100;

  const periods = emaPeriods(n);
  const emaFast = emaReading(closes, periods.fast);
  const emaSlow = emaReading(closes, periods.slow);

  const atrValue = lastAtr(candles);
  const atr = atrValue === null ? null : { value: atrValue, pct: (atrValue / last.close) * 100 };

  // Trend: structure (EMA order, EMA slopes) must point the way; the close's position against
  // the EMAs only adds to it. Moves smaller than a quarter ATR count as flat, so EMAs that
  // wander inside a range never make a trend on their own.
  const sign = (x: number): number => (x > 0 ? 1 : x < 0 ? -1 : 0);
  const flatBand = atr !== null ? atr.value * 0.25 : last.close * 0.005;
  const dir = (x: number): number => (Math.abs(x) < flatBand ? 0 : sign(x));
  let structure = 0;
  let position = 0;
  if (emaFast !== null) {
    structure += dir(emaFast.change);
    position += sign(last.close - emaFast.value);
  }
  if (emaSlow !== null && emaFast !== null) {
    structure += dir(emaSlow.change) + dir(emaFast.value - emaSlow.value);
    position += sign(last.close - emaSlow.value);
  }
  const maxScore = emaSlow !== null ? 5 : 2;
  let score = structure + position;
  let direction: TrendDirection = 'sideways';
  if (emaFast === null) {
    // a handful of candles: the change over the window and over the last bars stand in
    score = 2 * sign(changePct) + 2 * sign(recentChangePct);
    direction = score >= 2 ? 'bullish' : score <= -2 ? 'bearish' : 'sideways';
  } else if (structure >= 1 && score >= maxScore - 2) {
    direction = 'bullish';
  } else if (structure <= -1 && score <= -(maxScore - 2)) {
    direction = 'bearish';
  }
  const spreadPct =
    emaFast !== null && emaSlow !== null
      ? (Math.abs(emaFast.value - emaSlow.value) / emaSlow.value) * 100
      : 0;
  // Without the slow EMA the read rests on little history: never more than weak.
  const strength: TrendStrength =
    direction === 'sideways' || emaSlow === null
      ? 'weak'
      : Math.abs(score) >= 5 && spreadPct >= 5
        ? 'strong'
        : Math.abs(score) >= 4
          ? 'moderate'
          : 'weak';

  // Levels: swing pivots (window 2-3 bars), the period extremes and the EMAs, clustered within
  // half an ATR (1.5 % of price without an ATR).
  const k = n >= 100 ? 3 : 2;
  const tolerance = atr !== null ? atr.value * 0.5 : last.close * 0.015;
  const highs: Candidate[] = pivots(candles, k, 'high').map((p) => ({
    price: p.price,
    origin: 'swing_high',
    label: p.openTime,
    index: p.index,
  }));
  const lows: Candidate[] = pivots(candles, k, 'low').map((p) => ({
    price: p.price,
    origin: 'swing_low',
    label: p.openTime,
    index: p.index,
  }));
  highs.push({
    price: periodHigh.price,
    origin: 'period_high',
    label: periodHigh.openTime,
    index: n,
  });
  lows.push({ price: periodLow.price, origin: 'period_low', label: periodLow.openTime, index: n });
  const emaCandidates: Candidate[] = [emaFast, emaSlow]
    .filter((e): e is EmaReading => e !== null)
    .map((e) => ({ price: e.value, origin: 'ema', label: `EMA(${e.period})`, index: -1 }));
  const below = [...lows, ...highs, ...emaCandidates].filter((c) => c.price < last.close);
  const above = [...highs, ...lows, ...emaCandidates].filter((c) => c.price > last.close);
  const supports = cluster(below, tolerance)
    .sort((a, b) => b.price - a.price)
    .slice(0, MAX_LEVELS);
  const resistances = cluster(above, tolerance)
    .sort((a, b) => a.price - b.price)
    .slice(0, MAX_LEVELS);

  const analysis: MarketAnalysis = {
    candleCount: n,
    first,
    last,
    periodHigh,
    periodLow,
    changePct: round(changePct, 2),
    recentChangePct: round(recentChangePct, 2),
    emaFast,
    emaSlow,
    trend: { direction, strength, score },
    rsi: lastRsi(closes),
    macd: lastMacd(closes),
    atr,
    returnsStdevPct: returnsStdevPct(closes),
    supports,
    resistances,
  };
  if (forming !== undefined) {
    analysis.forming = {
      openTime: forming.openTime,
      open: forming.open,
      high: forming.high,
      low: forming.low,
      close: forming.close,
      volume: forming.volume,
    };
  }
  return analysis;
}
