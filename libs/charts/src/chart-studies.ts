/*
 * The studies (indicators and their settings) a chart template draws, named and sized in one
 * place. Templates declare them (`studies(params)`), the panes draw exactly them, and readers of a
 * charts manifest (the offline analyst) resolve them from the requests, so a report quotes the
 * EMAs, Bollinger bands, RSI and MACD the image shows and nothing else.
 */

export interface BollingerSettings {
  period: number;
  multiplier: number;
}

export interface RsiSettings {
  period: number;
  overbought: number;
  oversold: number;
}

export interface MacdSettings {
  fast: number;
  slow: number;
  signal: number;
}

export interface ChartStudies {
  /** EMA lines over the price, in drawing order (fast first). */
  emaPeriods: readonly number[];
  bollinger?: BollingerSettings | undefined;
  rsi?: RsiSettings | undefined;
  macd?: MacdSettings | undefined;
}

export function emaName(period: number): string {
  return `EMA(${period})`;
}

export function bollingerName(settings: BollingerSettings): string {
  return `Bollinger(${settings.period},${settings.multiplier})`;
}

export function rsiName(settings: Pick<RsiSettings, 'period'>): string {
  return `RSI(${settings.period})`;
}

export function macdName(settings: MacdSettings): string {
  return `MACD(${settings.fast},${settings.slow},${settings.signal})`;
}

/*
 * Bars before the first reading (indicators.ts semantics, the same for chart and report): an EMA
 * and Bollinger bands need `period` closes, RSI one more (it needs `period` changes), MACD's signal
 * line `signal` MACD values, the first of which needs `slow` closes.
 */
export function emaBarsNeeded(period: number): number {
  return period;
}

export function bollingerBarsNeeded(settings: BollingerSettings): number {
  return settings.period;
}

export function rsiBarsNeeded(settings: Pick<RsiSettings, 'period'>): number {
  return settings.period + 1;
}

export function macdBarsNeeded(settings: MacdSettings): number {
  return settings.slow + settings.signal - 1;
}

/** A drawn study that the history is too short to compute. */
export interface StudyShortfall {
  /** 'RSI(14)', 'EMA(50)', ... */
  study: string;
  needed: number;
  available: number;
}

/** 'RSI(14) needs 15 bars, 9 available': the same words in the image and in the description. */
export function shortfallNote(shortfall: StudyShortfall, unit = 'bars'): string {
  return `${shortfall.study} needs ${shortfall.needed} ${unit}, ${shortfall.available} available`;
}

/** Every study of `studies` that `available` bars cannot compute, in drawing order. */
export function studyShortfalls(studies: ChartStudies, available: number): StudyShortfall[] {
  const needs: [string, number][] = [
    ...studies.emaPeriods.map((p): [string, number] => [emaName(p), emaBarsNeeded(p)]),
  ];
  if (studies.bollinger !== undefined) {
    needs.push([bollingerName(studies.bollinger), bollingerBarsNeeded(studies.bollinger)]);
  }
  if (studies.rsi !== undefined) needs.push([rsiName(studies.rsi), rsiBarsNeeded(studies.rsi)]);
  if (studies.macd !== undefined) {
    needs.push([macdName(studies.macd), macdBarsNeeded(studies.macd)]);
  }
  return needs
    .filter(([, needed]) => available < needed)
    .map(([study, needed]) => ({ study, needed, available }));
}

/**
 * The studies of several charts of one manifest as one set: every EMA period once (ascending, so
 * the fastest is first), and the first Bollinger / RSI / MACD settings in request order.
 */
export function mergeStudies(list: readonly ChartStudies[]): ChartStudies {
  const periods = new Set<number>();
  const merged: ChartStudies = { emaPeriods: [] };
  for (const studies of list) {
    for (const period of studies.emaPeriods) periods.add(period);
    merged.bollinger ??= studies.bollinger;
    merged.rsi ??= studies.rsi;
    merged.macd ??= studies.macd;
  }
  return { ...merged, emaPeriods: [...periods].sort((a, b) => a - b) };
}
