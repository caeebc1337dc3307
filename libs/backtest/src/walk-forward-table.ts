import type { EvaluationRow } from '@tda/contracts';
import type { RecommendationScore } from './walk-forward';

/** Who produced a recommendation: the scores are compared across these. */
export interface WalkForwardGroup {
  provider: string;
  modelName: string;
  promptId: string;
}

export interface WalkForwardItem {
  group: WalkForwardGroup;
  score: RecommendationScore;
}

/**
 * One group's aggregate (the contract's EvaluationRow, recommendation_evaluation.schema.json):
 * `trades` counts the scored (BUY/SELL with a complete window); every statistic is over those
 * trades and null when there is none; buy-and-hold is over the same trades' windows. Unrounded.
 */
export type WalkForwardRow = EvaluationRow;

/** One row per group, sorted by provider, modelName, promptId (code-unit order: stable). */
export function walkForwardTable(items: readonly WalkForwardItem[]): WalkForwardRow[] {
  const groups = new Map<string, WalkForwardItem[]>();
  for (const item of items) {
    const { provider, modelName, promptId } = item.group;
    // JSON of the tuple: no separator a name could contain can merge two groups.
    const key = JSON.stringify([provider, modelName, promptId]);
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [item]);
    else list.push(item);
  }
  return [...groups.values()]
    .map((list) => rowOf(list))
    .sort(
      (a, b) =>
        compare(a.provider, b.provider) ||
        compare(a.modelName, b.modelName) ||
        compare(a.promptId, b.promptId),
    );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function rowOf(list: readonly WalkForwardItem[]): WalkForwardRow {
  const { provider, modelName, promptId } = (list[0] as WalkForwardItem).group;
  const scored = list.map((x) => x.score).filter((s) => s.status === 'scored');
  const returns = numbers(scored.map((s) => s.returnPct));
  const hits = scored.filter((s) => s.hit !== null);
  const meanReturnPct = mean(returns);
  const buyAndHoldMeanPct = mean(numbers(scored.map((s) => s.buyAndHoldPct)));
  return {
    provider,
    modelName,
    promptId,
    count: list.length,
    pending: list.filter((x) => x.score.status === 'pending').length,
    noTrade: list.filter((x) => x.score.status === 'no_trade').length,
    trades: scored.length,
    hitRatePct: hits.length > 0 ? (hits.filter((s) => s.hit).length / hits.length) * 100 : null,
    meanReturnPct,
    medianReturnPct: median(returns),
    meanMaePct: mean(numbers(scored.map((s) => s.maePct))),
    buyAndHoldMeanPct,
    excessVsBuyAndHoldPct:
      meanReturnPct !== null && buyAndHoldMeanPct !== null
        ? meanReturnPct - buyAndHoldMeanPct
        : null,
  };
}

function numbers(values: readonly (number | null)[]): number[] {
  return values.filter((v): v is number => v !== null);
}

function mean(values: readonly number[]): number | null {
  return values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : null;
}

/** The middle value; the mean of the two middle ones for an even count. */
function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const upper = sorted[mid] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] as number) + upper) / 2;
}

const COLUMNS: readonly [string, (row: WalkForwardRow) => string | number | null][] = [
  ['provider', (r) => r.provider],
  ['model', (r) => r.modelName],
  ['prompt', (r) => r.promptId],
  ['count', (r) => r.count],
  ['pending', (r) => r.pending],
  ['no trade', (r) => r.noTrade],
  ['trades', (r) => r.trades],
  ['hit rate %', (r) => r.hitRatePct],
  ['mean return %', (r) => r.meanReturnPct],
  ['median return %', (r) => r.medianReturnPct],
  ['mean MAE %', (r) => r.meanMaePct],
  ['buy & hold mean %', (r) => r.buyAndHoldMeanPct],
  ['excess vs buy & hold %', (r) => r.excessVsBuyAndHoldPct],
];

/** Counts are integers; other numbers with 2 decimals; '—' where there is no trade. */
function cell(value: string | number | null, column: number): string {
  if (value === null) return '—';
  if (typeof value === 'string') return value.replace(/\|/g, '\\|');
  return column < 7 ? String(value) : value.toFixed(2);
}

/** A markdown table of the rows for reports (the numbers are rounded only here). */
export function renderWalkForwardMarkdown(rows: readonly WalkForwardRow[]): string {
  const header = `| ${COLUMNS.map(([title]) => title).join(' | ')} |`;
  const rule = `|${COLUMNS.map((_, i) => (i < 3 ? ' --- ' : ' ---: ')).join('|')}|`;
  const body = rows.map(
    (row) => `| ${COLUMNS.map(([, get], i) => cell(get(row), i)).join(' | ')} |`,
  );
  return [header, rule, ...body].join('\n') + '\n';
}
