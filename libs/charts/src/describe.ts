import { frameRangeLabel, lastBarForming, type ChartFrame } from './chart-frame';

/** charts_manifest ChartItem.description maxLength. */
export const MAX_DESCRIPTION_LENGTH = 500;

/** 'BTC-USDT 1M candles 2020-03..2025-02 (60 bars, log price scale)' */
export function describeWindow(frame: ChartFrame, note?: string): string {
  const extra = note === undefined ? '' : `, ${note}`;
  return `${frame.symbol} ${frame.timeframe} candles ${frameRangeLabel(frame)} (${frame.shown.length} bars${extra})`;
}

/**
 * Joins the head and the facts into one plain sentence list, deterministic and within the
 * manifest limit (cut at a clause boundary when possible, never mid-number). Facts listed in
 * `keep` (why a study is missing) are never the ones cut: a reader of the manifest must learn
 * that the RSI pane is empty even when the other facts fill the 500 characters.
 */
export function composeDescription(
  head: string,
  facts: readonly string[],
  frame: ChartFrame,
  keep: readonly string[] = [],
): string {
  const clauses = [head, ...facts];
  if (lastBarForming(frame)) clauses.push('the last bar is still forming (drawn faded)');
  const kept = new Set(keep);
  // Room still owed to the kept clauses that come later ('; ' + clause each).
  let owed = clauses.reduce((sum, c, i) => sum + (i > 0 && kept.has(c) ? c.length + 2 : 0), 0);
  let text = '';
  // Once an ordinary clause does not fit, the later ordinary ones are dropped too (the text stays
  // in reading order); kept clauses still follow.
  let full = false;
  for (const [index, clause] of clauses.entries()) {
    const isKept = index > 0 && kept.has(clause);
    if (isKept) owed -= clause.length + 2;
    if (full && !isKept) continue;
    const next = text === '' ? clause : `${text}; ${clause}`;
    if (next.length + 1 + (isKept ? 0 : owed) > MAX_DESCRIPTION_LENGTH) {
      if (isKept || text === '') break;
      full = true;
      continue;
    }
    text = next;
  }
  if (text === '') text = head.slice(0, MAX_DESCRIPTION_LENGTH - 1);
  return `${text}.`;
}
