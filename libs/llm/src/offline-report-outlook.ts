import { rsiName } from '@tda/charts';
import type { AnalysisCandle, MarketAnalysis, PriceLevel } from './offline-analysis';
import {
  biasOf,
  formatOpenTime,
  formatPrice,
  TIMEFRAME_UNITS,
  type Signal,
} from './offline-report-format';

/**
 * The offline report's view: the levels it leans on, its bias, the risks and the outlook (with
 * what the still-forming candle already did to it).
 */

type AnalysisCandleLike = Pick<AnalysisCandle, 'openTime' | 'high' | 'low' | 'close'>;

/** One report's analysis with its timeframe's words: what every section reads. */
export interface ReportContext {
  a: MarketAnalysis;
  timeframe: string;
  /** The timeframe in words: "weekly". */
  name: string;
  horizon: string;
}

/** A previous report of the run read against this one (only the first with a direction or bias). */
export interface HigherTimeframeRead {
  timeframe: string;
  agrees: boolean;
  sentence: string;
}

/**
 * The floor and ceiling the outlook and risks lean on: the nearest support/resistance, or two
 * ATRs (5 % of the close without an ATR) from the close when the history has none.
 */
export interface PriceFrame {
  floor: number;
  ceiling: number;
  floorText: string;
  ceilingText: string;
}

export interface Outlook {
  bias: Signal;
  horizon: string;
  baseCase: string;
  bullCase: string;
  bearCase: string;
  invalidation: string;
}

export function priceFrame(a: MarketAnalysis): PriceFrame {
  const s1 = a.supports[0];
  const r1 = a.resistances[0];
  const atrStep = a.atr?.value ?? a.last.close * 0.05;
  const floor = s1?.price ?? Math.max(0, a.last.close - 2 * atrStep);
  const ceiling = r1?.price ?? a.last.close + 2 * atrStep;
  return {
    floor,
    ceiling,
    floorText:
      s1 === undefined ? `${formatPrice(floor)} (two ATRs below the close)` : formatPrice(floor),
    ceilingText:
      r1 === undefined
        ? `${formatPrice(ceiling)} (two ATRs above the close; no swing high overhead)`
        : formatPrice(ceiling),
  };
}

/** The MACD histogram's side: 1, -1, or 0 without MACD or when it is flat. */
function macdSide(a: MarketAnalysis): number {
  return a.macd === null ? 0 : Math.sign(a.macd.histogram);
}

/** MACD momentum points against a bullish/bearish bias (never against a neutral one). */
function macdAgainst(a: MarketAnalysis, bias: Signal): boolean {
  const side = macdSide(a);
  return bias !== 'neutral' && side !== 0 && side !== (bias === 'bullish' ? 1 : -1);
}

/** Bias: the trend, softened to neutral when momentum disagrees with a weak trend. */
export function reportBias(a: MarketAnalysis): Signal {
  const bias = biasOf(a.trend.direction);
  return a.trend.strength === 'weak' && macdAgainst(a, bias) ? 'neutral' : bias;
}

/** The indicator risks: RSI at an extreme, high volatility, momentum against the bias. */
function indicatorRisks(a: MarketAnalysis, floor: number, bias: Signal): string[] {
  const risks: string[] = [];
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
  if (a.macd !== null && macdAgainst(a, bias)) {
    risks.push(
      `MACD momentum (${macdSide(a) > 0 ? 'bullish' : 'bearish'}) disagrees with the ${bias} trend.`,
    );
  }
  return risks;
}

/**
 * details.risks, most specific first: the forming candle, the indicators, the higher timeframe,
 * a short history, then the floor's break; cut to the schema's 8.
 */
export function reportRisks(
  ctx: ReportContext,
  floor: number,
  bias: Signal,
  htf: HigherTimeframeRead | undefined,
): string[] {
  const { a, timeframe, name } = ctx;
  const risks: string[] = [];
  if (a.forming !== undefined) {
    risks.push(
      `The last ${name} candle (opened ${formatOpenTime(a.forming.openTime, timeframe)}) is still forming at ${formatPrice(a.forming.close)}; it is not confirmed and was left out of the indicators.`,
    );
  }
  risks.push(...indicatorRisks(a, floor, bias));
  if (htf?.agrees === false && a.trend.direction !== 'sideways') {
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
  return risks;
}

/** details.outlook: the cases around the price frame, then what the forming candle already did. */
export function reportOutlook(ctx: ReportContext, frame: PriceFrame, bias: Signal): Outlook {
  const { a, name } = ctx;
  const { floor, ceiling, floorText, ceilingText } = frame;
  const [s1, s2] = a.supports;
  const [r1, r2] = a.resistances;
  const outlook: Outlook = {
    bias,
    horizon: ctx.horizon,
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
    notePendingBreaks(outlook, a.forming, levels, { timeframe: ctx.timeframe, name });
  }
  return outlook;
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
