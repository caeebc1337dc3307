import {
  bollingerName,
  emaName,
  macdName,
  rsiName,
  shortfallNote,
  type StudyShortfall,
} from '@tda/charts';
import type {
  AnalysisCandle,
  EmaReading,
  MarketAnalysis,
  PriceLevel,
  TrendDirection,
} from './offline-analysis';

type AnalysisCandleLike = Pick<AnalysisCandle, 'openTime' | 'high' | 'low' | 'close'>;

/**
 * Turns a MarketAnalysis into an llm_report_output_v1 object (summary.markdown + details) with
 * fixed wording: the offline analyst's report. Every number is formatted by code here (no locale
 * APIs), so the text is byte-identical on every machine.
 */

export const OFFLINE_ANALYST_LABEL = 'Offline analyst (deterministic, no LLM)';

/** A previous report of the same run as the analyst reads it (from its llm_report_file). */
export interface HigherTimeframeView {
  timeframe: string;
  direction?: string;
  bias?: string;
}

export interface OfflineReportInput {
  symbol: string;
  timeframe: string;
  analysis: MarketAnalysis;
  /** Chart template ids/kinds from the charts manifest, in manifest order. */
  charts: readonly { chartTemplateId: string; kind?: string }[];
  higherTimeframes: readonly HigherTimeframeView[];
}

const TIMEFRAME_NAMES: Readonly<Record<string, string>> = {
  '1M': 'monthly',
  '1w': 'weekly',
  '1d': 'daily',
  '4h': '4-hour',
  '1h': 'hourly',
};

/** What one candle of the timeframe is called: "the forming week". */
const TIMEFRAME_UNITS: Readonly<Record<string, string>> = {
  '1M': 'month',
  '1w': 'week',
  '1d': 'day',
  '4h': '4-hour candle',
  '1h': 'hourly candle',
};

const HORIZONS: Readonly<Record<string, string>> = {
  '1M': 'next 1-3 months',
  '1w': 'next 2-6 weeks',
  '1d': 'next 1-2 weeks',
  '4h': 'next 2-5 days',
  '1h': 'next 12-48 hours',
};

function withThousands(integerDigits: string): string {
  return integerDigits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Prices for text: 43,193 / 187.35 / 0.06421. */
export function formatPrice(value: number): string {
  const abs = Math.abs(value);
  const sign = value < 0 ? '-' : '';
  if (abs >= 1000) return `${sign}${withThousands(Math.round(abs).toString())}`;
  if (abs >= 1) {
    const [int = '0', frac = '00'] = abs.toFixed(2).split('.');
    return `${sign}${withThousands(int)}.${frac}`;
  }
  return `${sign}${Number(abs.toPrecision(4)).toString()}`;
}

/** Prices for JSON: 2 decimals from 1 up, 4 significant digits below. */
export function roundPrice(value: number): number {
  if (Math.abs(value) >= 1) return Math.round(value * 100) / 100;
  return Number(value.toPrecision(4));
}

function pct(value: number, digits = 1): string {
  const fixed = value.toFixed(digits);
  return value > 0 ? `+${fixed}%` : `${fixed}%`;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** openTime at the timeframe's resolution: 2022-02 for months, 2022-02-21 for days/weeks. */
export function formatOpenTime(openTime: string, timeframe: string): string {
  if (timeframe === '1M') return openTime.slice(0, 7);
  if (timeframe === '4h' || timeframe === '1h')
    return `${openTime.slice(0, 10)} ${openTime.slice(11, 16)} UTC`;
  return openTime.slice(0, 10);
}

/** What a level is, as a phrase: "swing low of 2022-01-24" / "EMA(50) as a dynamic level". */
function levelOrigin(level: PriceLevel, timeframe: string): string {
  const when = formatOpenTime(level.label, timeframe);
  switch (level.origin) {
    case 'period_high':
      return `highest high of the period, ${when}`;
    case 'period_low':
      return `lowest low of the period, ${when}`;
    case 'swing_high':
      return `swing high of ${when}`;
    case 'swing_low':
      return `swing low of ${when}`;
    case 'ema':
      return `${level.label} as a dynamic level`;
  }
}

function touchesNote(level: PriceLevel): string | undefined {
  return level.touches >= 2 ? `${level.touches} swings in this zone` : undefined;
}

/** details.keyLevels[].rationale: "Swing low of 2021-07-19; 3 swings in this zone." */
function levelRationale(level: PriceLevel, timeframe: string): string {
  const origin = levelOrigin(level, timeframe);
  const note = touchesNote(level);
  const sentence = `${origin.charAt(0).toUpperCase()}${origin.slice(1)}`;
  return note === undefined ? `${sentence}.` : `${sentence}; ${note}.`;
}

/** Markdown: "29,361 (swing low of 2021-07-19, 3 swings in this zone, major)". */
function levelText(level: PriceLevel, timeframe: string): string {
  const parts = [levelOrigin(level, timeframe), touchesNote(level), level.strength].filter(
    (part): part is string => part !== undefined,
  );
  return `${formatPrice(level.price)} (${parts.join(', ')})`;
}

function biasOf(direction: TrendDirection): 'bullish' | 'bearish' | 'neutral' {
  return direction === 'sideways' ? 'neutral' : direction;
}

type Signal = 'bullish' | 'bearish' | 'neutral';

interface Indicator {
  name: string;
  value?: number;
  signal: Signal;
  comment: string;
}

/** "flat (+0.0% over 5 bars)" / "rising (+2.1% over 3 bars)"; right after the warm-up, no slope yet. */
function slopeText(ema: EmaReading): string {
  if (ema.slopeBars === 0) return 'just warmed up (no slope yet)';
  const word = ema.slopePct > 0.1 ? 'rising' : ema.slopePct < -0.1 ? 'falling' : 'flat';
  return `${word} (${pct(ema.slopePct)} over ${ema.slopeBars} bar${ema.slopeBars === 1 ? '' : 's'})`;
}

function emaIndicator(ema: EmaReading, close: number): Indicator {
  const distance = ((close - ema.value) / ema.value) * 100;
  return {
    name: emaName(ema.period),
    value: roundPrice(ema.value),
    signal:
      distance > 0 && ema.slopePct >= 0
        ? 'bullish'
        : distance < 0 && ema.slopePct <= 0
          ? 'bearish'
          : 'neutral',
    comment: `Close ${pct(distance)} ${distance >= 0 ? 'above' : 'below'} ${emaName(ema.period)}; the EMA is ${slopeText(ema)}.`,
  };
}

function rsiIndicator(rsi: number, name: string): Indicator {
  const [signal, reading]: [Signal, string] =
    rsi >= 70
      ? ['bearish', 'overbought: stretched, pullback risk']
      : rsi <= 30
        ? ['bullish', 'oversold: selling looks stretched']
        : rsi >= 55
          ? ['bullish', 'above the midline: buyers in control']
          : rsi <= 45
            ? ['bearish', 'below the midline: sellers in control']
            : ['neutral', 'near the midline: no momentum edge'];
  return { name, value: round(rsi, 1), signal, comment: `RSI ${round(rsi, 1)} is ${reading}.` };
}

/** Where the close sits in the bands; outside them is a breakout read, inside is no signal. */
function bollingerIndicator(a: MarketAnalysis, name: string): Indicator | undefined {
  const b = a.bollinger;
  if (b === null) return undefined;
  const close = a.last.close;
  const span = b.upper - b.lower;
  const position = span === 0 ? 50 : ((close - b.lower) / span) * 100;
  const where =
    close > b.upper
      ? 'closed above the upper band (a strong, stretched move)'
      : close < b.lower
        ? 'closed below the lower band (a strong, stretched move down)'
        : `sits at ${position.toFixed(0)}% of the band`;
  return {
    name,
    value: roundPrice(b.middle),
    signal: close > b.upper ? 'bullish' : close < b.lower ? 'bearish' : 'neutral',
    comment: `The close ${where}: lower ${formatPrice(b.lower)}, middle ${formatPrice(b.middle)}, upper ${formatPrice(b.upper)}; the band is ${((span / b.middle) * 100).toFixed(1)}% of the middle wide.`,
  };
}

/** A study the chart draws but the complete candles are too few for: cited, without a value. */
function shortfallIndicator(shortfall: StudyShortfall): Indicator {
  return {
    name: shortfall.study,
    signal: 'neutral',
    comment: `Not computed: ${shortfallNote(shortfall, 'complete candles')}.`,
  };
}

/**
 * Exactly the studies of the run's charts (MarketAnalysis.studies), in the chart's order: EMAs,
 * Bollinger, RSI, MACD; then ATR (volatility for the levels), then the drawn studies the
 * history is too short for.
 */
function indicators(a: MarketAnalysis): Indicator[] {
  const out: Indicator[] = a.emas.map((ema) => emaIndicator(ema, a.last.close));
  const { bollinger, rsi, macd } = a.studies;
  const bands =
    bollinger === undefined ? undefined : bollingerIndicator(a, bollingerName(bollinger));
  if (bands !== undefined) out.push(bands);
  if (a.rsi !== null && rsi !== undefined) out.push(rsiIndicator(a.rsi, rsiName(rsi)));
  if (a.macd !== null && macd !== undefined) {
    const m = a.macd;
    out.push({
      name: macdName(macd),
      value: roundPrice(m.macd),
      signal: m.histogram > 0 ? 'bullish' : m.histogram < 0 ? 'bearish' : 'neutral',
      comment: `MACD ${formatPrice(m.macd)} is ${m.histogram >= 0 ? 'above' : 'below'} its signal line (${formatPrice(m.signal)}); histogram ${formatPrice(m.histogram)}.`,
    });
  }
  if (a.atr !== null) {
    out.push({
      name: 'ATR(14)',
      value: roundPrice(a.atr.value),
      signal: 'neutral',
      comment: `Average true range is ${a.atr.pct.toFixed(1)}% of the last close.`,
    });
  }
  if (out.length === 0) {
    out.push({
      name: `Change over ${a.candleCount} candles`,
      value: a.changePct,
      signal: a.changePct > 0 ? 'bullish' : a.changePct < 0 ? 'bearish' : 'neutral',
      comment: `Too few candles for the chart's indicators; the close moved ${pct(a.changePct)} over the period.`,
    });
  }
  return [...out, ...a.shortfalls.map(shortfallIndicator)];
}

/** " 56.2" for RSI, " +17.2%" for a change, " 37,872" for price-like readings. */
function indicatorValueText(indicator: Indicator): string {
  if (indicator.value === undefined) return '';
  if (indicator.name.startsWith('RSI')) return ` ${indicator.value.toFixed(1)}`;
  if (indicator.name.startsWith('Bollinger')) return ` middle ${formatPrice(indicator.value)}`;
  if (indicator.name.startsWith('Change')) return ` ${pct(indicator.value)}`;
  return ` ${formatPrice(indicator.value)}`;
}

/** "moved +2.1% over 5 bars" (or "has no slope yet" right after its warm-up). */
function movedText(ema: EmaReading): string {
  return ema.slopeBars === 0
    ? 'has no slope yet'
    : `moved ${pct(ema.slopePct)} over ${ema.slopeBars} bar${ema.slopeBars === 1 ? '' : 's'}`;
}

/** Why the trend rests on fewer EMAs than the chart draws: "EMA(50) needs 50 complete candles, 40 available". */
function emaShortfallText(a: MarketAnalysis): string | undefined {
  const missing = a.shortfalls.filter((f) => f.study.startsWith('EMA('));
  return missing.length === 0
    ? undefined
    : missing.map((f) => shortfallNote(f, 'complete candles')).join('; ');
}

/** "EMA(20) 37,872 (bullish), RSI(14) 56.2 (neutral). Not enough history: EMA(50) needs ...". */
function indicatorsText(list: readonly Indicator[], shortfalls: readonly StudyShortfall[]): string {
  const missing = new Set(shortfalls.map((f) => f.study));
  const read = list
    .filter((i) => !missing.has(i.name))
    .map((i) => `${i.name}${indicatorValueText(i)} (${i.signal})`);
  const notes = shortfalls.map((f) => shortfallNote(f, 'complete candles'));
  return `${read.join(', ')}.${notes.length === 0 ? '' : ` Not enough history: ${notes.join('; ')}.`}`;
}

function trendRationale(a: MarketAnalysis, name: string): string {
  const parts: string[] = [];
  const close = formatPrice(a.last.close);
  const side = (ema: EmaReading): string => (a.last.close >= ema.value ? 'above' : 'below');
  const missing = emaShortfallText(a);
  if (a.emaFast !== null && a.emaSlow !== null) {
    const fast = emaName(a.emaFast.period);
    const slow = emaName(a.emaSlow.period);
    const order = a.emaFast.value >= a.emaSlow.value ? 'above' : 'below';
    parts.push(
      `The last ${name} close of ${close} is ${side(a.emaFast)} ${fast} (${formatPrice(a.emaFast.value)}) and ${side(a.emaSlow)} ${slow} (${formatPrice(a.emaSlow.value)}); ${fast} is ${order} ${slow} and ${slow} ${movedText(a.emaSlow)}.`,
    );
  } else if (a.emaFast !== null) {
    const fast = emaName(a.emaFast.period);
    parts.push(
      `The last ${name} close of ${close} is ${side(a.emaFast)} ${fast} (${formatPrice(a.emaFast.value)}), which ${movedText(a.emaFast)}${missing === undefined ? '; the chart draws no slower EMA' : `; ${missing}`}.`,
    );
  } else {
    parts.push(
      `Only ${a.candleCount} complete candles${missing === undefined ? '' : ` (${missing})`}: the trend is read from price change alone.`,
    );
  }
  parts.push(
    `Over the ${a.candleCount} candles the close changed ${pct(a.changePct)} (${pct(a.recentChangePct)} over the last ${Math.min(10, a.candleCount - 1)}).`,
  );
  return parts.join(' ');
}

/** A price the outlook names, with how it names it ("the nearest resistance"). */
interface NamedLevel {
  price: number;
  what: string;
  /** This level's break is the outlook's invalidation. */
  invalidates: boolean;
}

/**
 * The levels the outlook names above and below the last complete close: the floor/ceiling
 * (nearest support/resistance, or two ATRs away), the next ones the bull/bear cases open, and the
 * period extremes they fall back to.
 */
function outlookLevels(
  a: MarketAnalysis,
  floor: number,
  ceiling: number,
): { above: NamedLevel[]; below: NamedLevel[] } {
  const bias = biasOf(a.trend.direction);
  const [r1, r2] = a.resistances;
  const [s1, s2] = a.supports;
  // A swing cluster that is the period extreme is called that (the bull/bear cases do too).
  const what = (level: PriceLevel | undefined, rank: string, fallback: string): string =>
    level === undefined
      ? fallback
      : level.origin === 'period_high'
        ? 'the period high'
        : level.origin === 'period_low'
          ? 'the period low'
          : rank;
  const above: NamedLevel[] = [
    {
      price: ceiling,
      what: what(r1, 'the nearest resistance', 'the two-ATR ceiling'),
      invalidates: bias !== 'bullish',
    },
    ...(r2 === undefined
      ? []
      : [{ price: r2.price, what: what(r2, 'the next resistance', ''), invalidates: false }]),
    { price: a.periodHigh.price, what: 'the period high', invalidates: false },
  ];
  const below: NamedLevel[] = [
    {
      price: floor,
      what: what(s1, 'the nearest support', 'the two-ATR floor'),
      invalidates: bias !== 'bearish',
    },
    ...(s2 === undefined
      ? []
      : [{ price: s2.price, what: what(s2, 'the next support', ''), invalidates: false }]),
    { price: a.periodLow.price, what: 'the period low', invalidates: false },
  ];
  // One entry per price (the first, most specific role wins), on its side of the close.
  const unique = (levels: NamedLevel[]): NamedLevel[] =>
    levels.filter((l, i) => levels.findIndex((m) => m.price === l.price) === i);
  return {
    above: unique(above).filter((l) => l.price > a.last.close),
    below: unique(below).filter((l) => l.price < a.last.close),
  };
}

/**
 * When the still-forming candle already trades beyond a level the outlook names, the outlook
 * says so (a weekly outlook that says "a close above 41,000 opens 45,000" while the forming week
 * already trades at 42,300 reads stale) and what confirms it: the close of that candle. The
 * furthest level crossed on each side is named; a wick beyond it that closed back is said too.
 */
function notePendingBreaks(
  outlook: { baseCase: string; invalidation: string },
  forming: AnalysisCandleLike,
  levels: { above: NamedLevel[]; below: NamedLevel[] },
  tf: { timeframe: string; name: string },
): void {
  const unit = TIMEFRAME_UNITS[tf.timeframe] ?? 'candle';
  const opened = formatOpenTime(forming.openTime, tf.timeframe);
  for (const side of ['above', 'below'] as const) {
    const up = side === 'above';
    const crossed = (up ? levels.above : levels.below)
      .filter((l) => (up ? forming.high > l.price : forming.low < l.price))
      .sort((x, y) => (up ? y.price - x.price : x.price - y.price));
    const furthest = crossed[0];
    if (furthest === undefined) continue;
    const beyond = (l: NamedLevel): boolean =>
      up ? forming.close > l.price : forming.close < l.price;
    const extreme = up ? `high ${formatPrice(forming.high)}` : `low ${formatPrice(forming.low)}`;
    const at = `${furthest.what} at ${formatPrice(furthest.price)}`;
    const sentence = beyond(furthest)
      ? `The forming ${unit} (opened ${opened}) already trades ${side} ${at} (last ${formatPrice(forming.close)}, ${extreme}); confirmation needs a ${tf.name} close ${side} it.`
      : `The forming ${unit} (opened ${opened}) already traded ${side} ${at} (${extreme}) but is back ${up ? 'below' : 'above'} it at ${formatPrice(forming.close)}; only a ${tf.name} close ${side} it would confirm the break.`;
    outlook.baseCase = `${outlook.baseCase} ${sentence}`;
    const invalidation = crossed.find((l) => l.invalidates);
    if (invalidation !== undefined) {
      outlook.invalidation = `${outlook.invalidation} The forming ${unit} ${beyond(invalidation) ? 'already trades' : 'already traded'} ${side} ${formatPrice(invalidation.price)}; its ${tf.name} close decides.`;
    }
  }
}

export function buildOfflineReport(input: OfflineReportInput): {
  summary: { markdown: string };
  details: Record<string, unknown>;
} {
  const { analysis: a, timeframe, symbol } = input;
  const name = TIMEFRAME_NAMES[timeframe] ?? timeframe;
  const horizon = HORIZONS[timeframe] ?? 'next few bars';
  const direction = a.trend.direction;
  const s1 = a.supports[0];
  const s2 = a.supports[1];
  const r1 = a.resistances[0];
  const r2 = a.resistances[1];
  const atrStep = a.atr?.value ?? a.last.close * 0.05;
  const floor = s1?.price ?? Math.max(0, a.last.close - 2 * atrStep);
  const ceiling = r1?.price ?? a.last.close + 2 * atrStep;
  const floorText =
    s1 === undefined ? `${formatPrice(floor)} (two ATRs below the close)` : formatPrice(floor);
  const ceilingText =
    r1 === undefined
      ? `${formatPrice(ceiling)} (two ATRs above the close; no swing high overhead)`
      : formatPrice(ceiling);

  // Higher-timeframe context from previous reports of this run.
  const htf = input.higherTimeframes.find((v) => v.direction !== undefined || v.bias !== undefined);
  let htfSentence: string | undefined;
  let htfAgrees: boolean | undefined;
  if (htf !== undefined) {
    const htfDirection = htf.direction ?? (htf.bias === 'neutral' ? 'sideways' : htf.bias);
    htfAgrees = htfDirection === direction;
    const htfName = TIMEFRAME_NAMES[htf.timeframe] ?? htf.timeframe;
    htfSentence = `The ${htfName} (${htf.timeframe}) report of this run reads the trend as ${htfDirection ?? 'unknown'}${
      htf.bias === undefined ? '' : ` with a ${htf.bias} bias`
    }; the ${name} structure (${direction}) ${htfAgrees ? 'confirms it' : direction === 'sideways' ? 'does not confirm it yet' : 'contradicts it: treat the move as counter-trend until the higher timeframe turns'}.`;
  }

  // Bias: the trend, softened to neutral when momentum disagrees with a weak trend.
  let bias = biasOf(direction);
  const macdSide = a.macd === null ? 0 : Math.sign(a.macd.histogram);
  if (
    a.trend.strength === 'weak' &&
    bias !== 'neutral' &&
    macdSide !== 0 &&
    macdSide !== (bias === 'bullish' ? 1 : -1)
  ) {
    bias = 'neutral';
  }

  const risks: string[] = [];
  if (a.forming !== undefined) {
    risks.push(
      `The last ${name} candle (opened ${formatOpenTime(a.forming.openTime, timeframe)}) is still forming at ${formatPrice(a.forming.close)}; it is not confirmed and was left out of the indicators.`,
    );
  }
  const rsiLabel = a.studies.rsi === undefined ? 'RSI' : rsiName(a.studies.rsi);
  if (a.rsi !== null && a.rsi >= 70)
    risks.push(
      `${rsiLabel} at ${a.rsi.toFixed(1)} is overbought: a pullback towards ${formatPrice(floor)} would be ordinary.`,
    );
  if (a.rsi !== null && a.rsi <= 30)
    risks.push(
      `${rsiLabel} at ${a.rsi.toFixed(1)} is oversold: short-covering rallies can be sharp.`,
    );
  if (a.atr !== null && a.atr.pct >= 8) {
    risks.push(
      `High volatility: ATR(14) is ${a.atr.pct.toFixed(1)}% of price, so levels can be overshot intrabar.`,
    );
  }
  if (
    a.macd !== null &&
    bias !== 'neutral' &&
    macdSide !== 0 &&
    macdSide !== (bias === 'bullish' ? 1 : -1)
  ) {
    risks.push(
      `MACD momentum (${macdSide > 0 ? 'bullish' : 'bearish'}) disagrees with the ${bias} trend.`,
    );
  }
  if (htfAgrees === false && htf !== undefined && direction !== 'sideways') {
    risks.push(`This ${name} view runs against the ${htf.timeframe} report of the same run.`);
  }
  if (a.candleCount < 30 || a.shortfalls.length > 0) {
    const missing = a.shortfalls.map((f) => f.study).join(', ');
    risks.push(
      `Only ${a.candleCount} complete candles: ${missing === '' ? '' : `${missing} cannot be computed yet and `}levels are less reliable.`,
    );
  }
  risks.push(
    `A ${name} close below ${formatPrice(floor)} would break the nearest support and weaken the picture.`,
  );
  if (risks.length > 8) risks.length = 8;

  const outlook = {
    bias,
    horizon,
    baseCase:
      bias === 'bullish'
        ? `Trend continuation while price holds above ${floorText}; a test of ${ceilingText} is the base case.`
        : bias === 'bearish'
          ? `Pressure persists while price stays below ${ceilingText}; a test of ${floorText} is the base case.`
          : `Range trading between ${floorText} and ${ceilingText} while momentum resets.`,
    bullCase:
      r1 === undefined || r1.origin === 'period_high'
        ? `A ${name} close above ${formatPrice(a.periodHigh.price)} would mean new period highs (no overhead level in this history).`
        : `A ${name} close above ${formatPrice(r1.price)} opens ${r2 === undefined ? `the period high at ${formatPrice(a.periodHigh.price)}` : formatPrice(r2.price)}.`,
    bearCase:
      s1 === undefined || s1.origin === 'period_low'
        ? `A ${name} close below ${formatPrice(a.periodLow.price)} would mean new period lows (no lower level in this history).`
        : `A ${name} close below ${formatPrice(s1.price)} opens ${s2 === undefined ? `the period low at ${formatPrice(a.periodLow.price)}` : formatPrice(s2.price)}.`,
    invalidation:
      bias === 'bullish'
        ? `A ${name} close below ${formatPrice(floor)}.`
        : bias === 'bearish'
          ? `A ${name} close above ${formatPrice(ceiling)}.`
          : `A ${name} close outside ${formatPrice(floor)}-${formatPrice(ceiling)} (the breakout side sets the next move).`,
  };
  if (a.forming !== undefined) {
    const levels = outlookLevels(a, floor, ceiling);
    notePendingBreaks(outlook, a.forming, levels, { timeframe, name });
  }

  let confidence = 0.35 + 0.05 * Math.abs(a.trend.score);
  if (a.candleCount < 30) confidence -= 0.1;
  if (htfAgrees === true) confidence += 0.05;
  if (htfAgrees === false) confidence -= 0.05;
  confidence = round(Math.min(0.6, Math.max(0.1, confidence)), 2);

  const indicatorList = indicators(a);
  const trendText = trendRationale(a, name);
  const details = {
    trend: { direction, strength: a.trend.strength, rationale: trendText },
    keyLevels: {
      support: a.supports.map((l) => ({
        price: roundPrice(l.price),
        strength: l.strength,
        rationale: levelRationale(l, timeframe),
      })),
      resistance: a.resistances.map((l) => ({
        price: roundPrice(l.price),
        strength: l.strength,
        rationale: levelRationale(l, timeframe),
      })),
    },
    indicators: indicatorList,
    risks,
    outlook,
    confidence,
  };

  const md: string[] = [
    `## ${symbol} ${name} (${timeframe}): ${direction === 'sideways' ? 'sideways' : `${direction} trend`}, ${a.trend.strength}`,
    '',
    `_${OFFLINE_ANALYST_LABEL}: computed from the OHLCV data of this run with fixed rules; the chart images were not read._`,
    '',
    `The last complete candle (${formatOpenTime(a.last.openTime, timeframe)}) closed at **${formatPrice(a.last.close)}**. The period runs from ${formatOpenTime(a.first.openTime, timeframe)}, with a high of ${formatPrice(a.periodHigh.price)} (${formatOpenTime(a.periodHigh.openTime, timeframe)}) and a low of ${formatPrice(a.periodLow.price)} (${formatOpenTime(a.periodLow.openTime, timeframe)}). ${trendText}`,
  ];
  if (a.forming !== undefined) {
    md.push(
      '',
      `The current candle (opened ${formatOpenTime(a.forming.openTime, timeframe)}) is still forming at ${formatPrice(a.forming.close)}; it is not treated as confirmed.`,
    );
  }
  if (htfSentence !== undefined) md.push('', `**Higher timeframe.** ${htfSentence}`);
  md.push(
    '',
    `**Key levels.** Support: ${a.supports.length === 0 ? 'none below the close in this history' : a.supports.map((l) => levelText(l, timeframe)).join('; ')}. Resistance: ${
      a.resistances.length === 0
        ? 'none above the close in this history (price is at the top of its range)'
        : a.resistances.map((l) => levelText(l, timeframe)).join('; ')
    }.`,
    '',
    `**Indicators.** ${indicatorsText(indicatorList, a.shortfalls)}${
      a.returnsStdevPct === null
        ? ''
        : ` Close-to-close volatility is ${a.returnsStdevPct.toFixed(1)}% per candle.`
    }`,
    '',
    '**Risks.**',
    ...risks.map((r) => `- ${r}`),
    '',
    `**Outlook (${horizon}, bias ${bias}).** ${outlook.baseCase} Bull case: ${outlook.bullCase} Bear case: ${outlook.bearCase} Invalidation: ${outlook.invalidation}`,
  );
  if (input.charts.length > 0) {
    md.push(
      '',
      `Charts in this run: ${input.charts.map((c) => (c.kind === undefined ? c.chartTemplateId : `${c.chartTemplateId} (${c.kind})`)).join(', ')}.`,
    );
  }
  md.push('', 'This is rule-based analysis, not financial advice.');
  return { summary: { markdown: md.join('\n') }, details };
}
