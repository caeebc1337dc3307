import { frameRangeLabel, lastBarForming, type ChartFrame } from './chart-frame';

/** charts_manifest ChartItem.description maxLength. */
export const MAX_DESCRIPTION_LENGTH = 500;

/** 'BTC-USD 1M candles 2020-03..2025-02 (60 bars, log price scale)' */
export function describeWindow(frame: ChartFrame, note?: string): string {
  const extra = note === undefined ? '' : `, ${note}`;
  return `${frame.symbol} ${frame.timeframe} candles ${frameRangeLabel(frame)} (${frame.shown.length} bars${extra})`;
}

/**
 * Joins the head and the facts into one plain sentence list, deterministic and within the
 * manifest limit (cut at a clause boundary when possible, never mid-number).
 */
export function composeDescription(
  head: string,
  facts: readonly string[],
  frame: ChartFrame,
): string {
  const clauses = [head, ...facts];
  if (lastBarForming(frame)) clauses.push('the last bar is still forming (drawn faded)');
  let text = '';
  for (const clause of clauses) {
    const next = text === '' ? clause : `${text}; ${clause}`;
    if (next.length + 1 > MAX_DESCRIPTION_LENGTH) break;
    text = next;
  }
  if (text === '') text = head.slice(0, MAX_DESCRIPTION_LENGTH - 1);
  return `${text}.`;
}
