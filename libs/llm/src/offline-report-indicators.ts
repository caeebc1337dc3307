import {
  bollingerName,
  emaName,
  macdName,
  rsiName,
  shortfallNote,
  type StudyShortfall,
} from '@tda/charts';
import type { EmaReading, MarketAnalysis } from './offline-analysis';
import { formatPrice, pct, round, roundPrice, type Signal } from './offline-report-format';

/** The offline report's indicator readings and trend text, from the studies of the run's charts. */

export interface Indicator {
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
export function indicators(a: MarketAnalysis): Indicator[] {
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
export function indicatorsText(
  list: readonly Indicator[],
  shortfalls: readonly StudyShortfall[],
): string {
  const missing = new Set(shortfalls.map((f) => f.study));
  const read = list
    .filter((i) => !missing.has(i.name))
    .map((i) => `${i.name}${indicatorValueText(i)} (${i.signal})`);
  const notes = shortfalls.map((f) => shortfallNote(f, 'complete candles'));
  return `${read.join(', ')}.${notes.length === 0 ? '' : ` Not enough history: ${notes.join('; ')}.`}`;
}

/** details.trend.rationale: the close against the chart's EMAs (or price change alone), then the change over the period. */
export function trendRationale(a: MarketAnalysis, name: string): string {
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
