import {
  bollingerSeries,
  createDefaultChartTemplateRegistry,
  DEFAULT_TEMPLATE_ID,
  emaSeries,
  lastValue,
  macdSeries,
  rsiSeries,
  studyShortfalls,
  type ChartStudies,
  type StudyShortfall,
} from '@tda/charts';

/**
 * The numbers behind the offline analyst's report: trend (the chart's EMAs, slope, close vs EMAs),
 * momentum (the chart's RSI and MACD), Bollinger bands when the chart draws them, volatility
 * (ATR 14, stdev of returns), support/resistance (swing pivots clustered by distance, plus the
 * EMAs as dynamic levels). The indicators are the studies of the charts of the run (libs/charts
 * template studies, the same maths as the images), never a set of its own: a report that cites
 * EMA 9/21 under a chart that draws EMA 20/50 cannot be checked against the chart. Pure and
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
  /** Bars the slope is measured over: SLOPE_BARS, fewer right after the warm-up (0: no slope). */
  slopeBars: number;
  /** % change of the EMA over the last `slopeBars` bars. */
  slopePct: number;
  /** Absolute change of the EMA over the last `slopeBars` bars. */
  change: number;
}

export interface BollingerReading {
  upper: number;
  middle: number;
  lower: number;
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
  /** The studies computed: the charts' (see studiesOfManifest). */
  studies: ChartStudies;
  /** One reading per EMA period of the studies that the history carries, in period order. */
  emas: EmaReading[];
  /** The fastest EMA reading; null without one. */
  emaFast: EmaReading | null;
  /** The slowest EMA of two or more, when the history carries it; else null. */
  emaSlow: EmaReading | null;
  trend: { direction: TrendDirection; strength: TrendStrength; score: number };
  rsi: number | null;
  macd: { macd: number; signal: number; histogram: number } | null;
  bollinger: BollingerReading | null;
  /** The studies the complete candles are too few for (`available` = complete candles). */
  shortfalls: StudyShortfall[];
  atr: { value: number; pct: number } | null;
  returnsStdevPct: number | null;
  supports: PriceLevel[];
  resistances: PriceLevel[];
}

export const SLOPE_BARS = 5;
const MAX_LEVELS = 3;

const TEMPLATES = createDefaultChartTemplateRegistry();

/** What the report flows draw (ctpl_default_v1 without params): EMA 20/50, Bollinger(20,2), RSI(14), MACD(12,26,9). */
export const DEFAULT_REPORT_STUDIES: ChartStudies =
  TEMPLATES.get(DEFAULT_TEMPLATE_ID).bind().studies;

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The studies the charts of a charts manifest draw: its `requested[]` templates with their params
 * (the manifest the LLM step reads), merged. A manifest without a chart this version knows falls
 * back to the default report chart's studies.
 */
export function studiesOfManifest(manifest: unknown): ChartStudies {
  const requested = asRecord(manifest)?.['requested'];
  const requests = (Array.isArray(requested) ? requested : []).flatMap((entry) => {
    const request = asRecord(entry);
    const id = request?.['chartTemplateId'];
    if (typeof id !== 'string') return [];
    return [{ chartTemplateId: id, params: asRecord(request?.['params']) }];
  });
  return TEMPLATES.studiesOf(requests) ?? DEFAULT_REPORT_STUDIES;
}

function emaReading(closes: readonly number[], period: number): EmaReading | null {
  const series = emaSeries(closes, period);
  const value = series[series.length - 1];
  if (value === null || value === undefined) return null;
  const stable = series.filter((v) => v !== null).length;
  const slopeBars = Math.min(SLOPE_BARS, stable - 1);
  const before = series[series.length - 1 - slopeBars] ?? value;
  return {
    period,
    value,
    slopeBars,
    slopePct: ((value - before) / before) * 100,
    change: value - before,
  };
}

function lastMacd(closes: readonly number[], studies: ChartStudies): MarketAnalysis['macd'] {
  const settings = studies.macd;
  if (settings === undefined) return null;
  const last = lastValue(macdSeries(closes, settings.fast, settings.slow, settings.signal));
  if (last === null || last.signal === null || last.histogram === null) return null;
  return { macd: last.macd, signal: last.signal, histogram: last.histogram };
}

function lastBollinger(closes: readonly number[], studies: ChartStudies): BollingerReading | null {
  const settings = studies.bollinger;
  if (settings === undefined) return null;
  return lastValue(bollingerSeries(closes, settings.period, settings.multiplier));
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

type PeriodStats = Pick<
  MarketAnalysis,
  'periodHigh' | 'periodLow' | 'changePct' | 'recentChangePct'
>;
type ChartEmas = Pick<MarketAnalysis, 'emas' | 'emaFast' | 'emaSlow'>;

/** A plain copy of a candle: the export's extra fields (complete) stay out of the analysis. */
function candleOf(c: AnalysisCandle): AnalysisCandle {
  return {
    openTime: c.openTime,
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
    volume: c.volume,
  };
}

/** The complete candles, and the still-forming last one apart (never part of the indicators). */
function splitForming(all: readonly (AnalysisCandle & { complete?: boolean })[]): {
  candles: AnalysisCandle[];
  forming: AnalysisCandle | undefined;
} {
  const lastRaw = all[all.length - 1];
  const forming = lastRaw !== undefined && lastRaw.complete === false ? lastRaw : undefined;
  const candles = (forming === undefined ? all : all.slice(0, -1)).map(candleOf);
  return { candles, forming: forming === undefined ? undefined : candleOf(forming) };
}

/** Period extremes and the (unrounded) change over the period and over its last 10 candles. */
function periodStats(
  candles: readonly AnalysisCandle[],
  first: AnalysisCandle,
  last: AnalysisCandle,
): PeriodStats {
  let periodHigh = { price: first.high, openTime: first.openTime };
  let periodLow = { price: first.low, openTime: first.openTime };
  for (const c of candles) {
    if (c.high > periodHigh.price) periodHigh = { price: c.high, openTime: c.openTime };
    if (c.low < periodLow.price) periodLow = { price: c.low, openTime: c.openTime };
  }
  const changePct = ((last.close - first.close) / first.close) * 100;
  const recentBase = candles[Math.max(0, candles.length - 1 - 10)] ?? first;
  const recentChangePct = ((last.close - recentBase.close) / recentBase.close) * 100;
  return { periodHigh, periodLow, changePct, recentChangePct };
}

/** The chart's EMAs, fastest first; the trend reads the fastest against the slowest. */
function chartEmas(closes: readonly number[], studies: ChartStudies): ChartEmas {
  const periods = [...new Set(studies.emaPeriods)].sort((a, b) => a - b);
  const emas = periods
    .map((period) => emaReading(closes, period))
    .filter((e): e is EmaReading => e !== null);
  const emaFast = emas[0] ?? null;
  const slowest = periods.length >= 2 ? periods[periods.length - 1] : undefined;
  const emaSlow = emas.find((e) => e.period === slowest) ?? null;
  return { emas, emaFast, emaSlow };
}

/**
 * Trend: structure (EMA order, EMA slopes) must point the way; the close's position against the
 * EMAs only adds to it. Moves smaller than a quarter ATR count as flat, so EMAs that wander
 * inside a range never make a trend on their own.
 */
function readTrend(
  { emaFast, emaSlow }: ChartEmas,
  period: PeriodStats,
  close: number,
  atr: MarketAnalysis['atr'],
): MarketAnalysis['trend'] {
  const sign = (x: number): number => (x > 0 ? 1 : x < 0 ? -1 : 0);
  const flatBand = atr !== null ? atr.value * 0.25 : close * 0.005;
  const dir = (x: number): number => (Math.abs(x) < flatBand ? 0 : sign(x));
  let structure = 0;
  let position = 0;
  if (emaFast !== null) {
    structure += dir(emaFast.change);
    position += sign(close - emaFast.value);
  }
  if (emaSlow !== null && emaFast !== null) {
    structure += dir(emaSlow.change) + dir(emaFast.value - emaSlow.value);
    position += sign(close - emaSlow.value);
  }
  const maxScore = emaSlow !== null ? 5 : 2;
  let score = structure + position;
  let direction: TrendDirection = 'sideways';
  if (emaFast === null) {
    // a handful of candles: the change over the window and over the last bars stand in
    score = 2 * sign(period.changePct) + 2 * sign(period.recentChangePct);
    direction = score >= 2 ? 'bullish' : score <= -2 ? 'bearish' : 'sideways';
  } else if (structure >= 1 && score >= maxScore - 2) {
    direction = 'bullish';
  } else if (structure <= -1 && score <= -(maxScore - 2)) {
    direction = 'bearish';
  }
  return { direction, strength: trendStrength(direction, score, emaFast, emaSlow), score };
}

function trendStrength(
  direction: TrendDirection,
  score: number,
  emaFast: EmaReading | null,
  emaSlow: EmaReading | null,
): TrendStrength {
  const spreadPct =
    emaFast !== null && emaSlow !== null
      ? (Math.abs(emaFast.value - emaSlow.value) / emaSlow.value) * 100
      : 0;
  // Without the slow EMA the read rests on little history: never more than weak.
  return direction === 'sideways' || emaSlow === null
    ? 'weak'
    : Math.abs(score) >= 5 && spreadPct >= 5
      ? 'strong'
      : Math.abs(score) >= 4
        ? 'moderate'
        : 'weak';
}

/**
 * Levels: swing pivots (window 2-3 bars), the period extremes and the EMAs, clustered within
 * half an ATR (1.5 % of price without an ATR); the nearest MAX_LEVELS on each side of the close.
 */
function priceLevels(
  candles: readonly AnalysisCandle[],
  period: PeriodStats,
  emas: readonly EmaReading[],
  close: number,
  atr: MarketAnalysis['atr'],
): Pick<MarketAnalysis, 'supports' | 'resistances'> {
  const n = candles.length;
  const k = n >= 100 ? 3 : 2;
  const tolerance = atr !== null ? atr.value * 0.5 : close * 0.015;
  const swing = (p: Pivot, origin: LevelOrigin): Candidate => ({
    price: p.price,
    origin,
    label: p.openTime,
    index: p.index,
  });
  const highs = pivots(candles, k, 'high').map((p) => swing(p, 'swing_high'));
  const lows = pivots(candles, k, 'low').map((p) => swing(p, 'swing_low'));
  const { periodHigh, periodLow } = period;
  highs.push({
    price: periodHigh.price,
    origin: 'period_high',
    label: periodHigh.openTime,
    index: n,
  });
  lows.push({ price: periodLow.price, origin: 'period_low', label: periodLow.openTime, index: n });
  const emaCandidates: Candidate[] = emas.map((e) => ({
    price: e.value,
    origin: 'ema',
    label: `EMA(${e.period})`,
    index: -1,
  }));
  const below = [...lows, ...highs, ...emaCandidates].filter((c) => c.price < close);
  const above = [...highs, ...lows, ...emaCandidates].filter((c) => c.price > close);
  return {
    supports: cluster(below, tolerance)
      .sort((a, b) => b.price - a.price)
      .slice(0, MAX_LEVELS),
    resistances: cluster(above, tolerance)
      .sort((a, b) => a.price - b.price)
      .slice(0, MAX_LEVELS),
  };
}

/**
 * Analyses the candles with the given studies (default: the report chart's, DEFAULT_REPORT_STUDIES;
 * pass studiesOfManifest(manifest) to follow the charts of a run).
 */
export function analyseCandles(
  all: readonly (AnalysisCandle & { complete?: boolean })[],
  studies: ChartStudies = DEFAULT_REPORT_STUDIES,
): MarketAnalysis {
  const { candles, forming } = splitForming(all);
  const first = candles[0];
  const last = candles[candles.length - 1];
  if (first === undefined || last === undefined) {
    throw new RangeError('analyseCandles needs at least one complete candle');
  }
  const closes = candles.map((c) => c.close);
  const n = candles.length;
  const period = periodStats(candles, first, last);
  const emas = chartEmas(closes, studies);
  const atrValue = lastAtr(candles);
  const atr = atrValue === null ? null : { value: atrValue, pct: (atrValue / last.close) * 100 };
  const levels = priceLevels(candles, period, emas.emas, last.close, atr);
  const analysis: MarketAnalysis = {
    candleCount: n,
    first,
    last,
    periodHigh: period.periodHigh,
    periodLow: period.periodLow,
    changePct: round(period.changePct, 2),
    recentChangePct: round(period.recentChangePct, 2),
    studies,
    emas: emas.emas,
    emaFast: emas.emaFast,
    emaSlow: emas.emaSlow,
    trend: readTrend(emas, period, last.close, atr),
    rsi: studies.rsi === undefined ? null : lastValue(rsiSeries(closes, studies.rsi.period)),
    macd: lastMacd(closes, studies),
    bollinger: lastBollinger(closes, studies),
    shortfalls: studyShortfalls(studies, n),
    atr,
    returnsStdevPct: returnsStdevPct(closes),
    supports: levels.supports,
    resistances: levels.resistances,
  };
  if (forming !== undefined) analysis.forming = forming;
  return analysis;
}
