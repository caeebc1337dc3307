import type { LlmRecommendation } from '@tda/contracts';
import {
  plausibleBand,
  recommendationViolations,
  type PositionFacts,
  type RecommendationFacts,
} from '@tda/step-types';
import { formatPrice, roundPrice } from './offline-report';

/**
 * The offline recommender's rules (provider 'offline', no model): one recommendation from the
 * input reports' structured details (trend direction and strength per timeframe, key levels), the
 * last close at asOf and the account (position in the symbol, risk limits). Fixed wording, numbers
 * formatted by code: the same inputs give the same bytes on every machine. The result always
 * passes the recommendation's domain invariants (it falls back to HOLD otherwise).
 */

export const OFFLINE_RECOMMENDER_LABEL = 'Offline recommender (deterministic, no LLM)';

/** What the recommender reads of one llm_report_file. */
export interface ReportView {
  reportId: string;
  timeframe?: string;
  direction?: 'bullish' | 'bearish' | 'sideways';
  strength?: 'weak' | 'moderate' | 'strong';
  bias?: 'bullish' | 'bearish' | 'neutral';
  supports: number[];
  resistances: number[];
}

export interface OfflineRecommendationInput {
  symbol: string;
  lastClose: number;
  /** Longest timeframe first (inputs order). */
  reports: readonly ReportView[];
  /** The position in the symbol (null: none, or no account). */
  position: PositionFacts | null;
  riskLimits: RecommendationFacts['riskLimits'];
  /** True when the step read an account snapshot (wording only). */
  hasAccount: boolean;
}

/** |score| at or above which the reports' agreement is a trade (below: HOLD). */
export const ENTER_THRESHOLD = 0.3;
/** |score| at or above which a position against the signal is cut entirely (else by half). */
const FULL_REDUCE_THRESHOLD = 0.6;
/** The recommender never claims more conviction than this: it reads rules, not markets. */
const MAX_SIGNAL_STRENGTH = 0.8;
/** Position changes below this fraction of equity are not worth a trade: HOLD. */
const MIN_SIZE = 0.005;

/** Longer timeframes set the context and weigh more. */
const TIMEFRAME_WEIGHT: Readonly<Record<string, number>> = {
  '1M': 3,
  '1w': 3,
  '1d': 2,
  '4h': 1.5,
  '1h': 1,
};
const STRENGTH_FACTOR: Readonly<Record<string, number>> = { strong: 1, moderate: 0.7, weak: 0.4 };
const TIMEFRAME_ORDER = ['1h', '4h', '1d', '1w', '1M'];
/** The horizon follows the shortest timeframe of the inputs (it sets the timing). */
const HORIZONS: Readonly<Record<string, { days: number; label: string }>> = {
  '1h': { days: 2, label: '12-48 hours' },
  '4h': { days: 4, label: '2-5 days' },
  '1d': { days: 10, label: '1-2 weeks' },
  '1w': { days: 28, label: '2-6 weeks' },
  '1M': { days: 60, label: '1-3 months' },
};
const DEFAULT_HORIZON = { days: 14, label: '2 weeks' };

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** A report's vote: +1 bullish, -1 bearish, 0 sideways (the outlook bias when no trend is read). */
function vote(report: ReportView): number {
  const reading = report.direction ?? (report.bias === 'neutral' ? 'sideways' : report.bias);
  const sign = reading === 'bullish' ? 1 : reading === 'bearish' ? -1 : 0;
  return sign * (STRENGTH_FACTOR[report.strength ?? ''] ?? 0.5);
}

/** The weighted agreement of the reports, -1 (all strongly bearish) .. +1 (all strongly bullish). */
export function reportScore(reports: readonly ReportView[]): number {
  let total = 0;
  let weights = 0;
  for (const report of reports) {
    const weight = TIMEFRAME_WEIGHT[report.timeframe ?? ''] ?? 1;
    total += weight * vote(report);
    weights += weight;
  }
  return weights === 0 ? 0 : total / weights;
}

function horizonOf(reports: readonly ReportView[]): { days: number; label: string } {
  const shortest = TIMEFRAME_ORDER.find((tf) => reports.some((r) => r.timeframe === tf));
  return shortest === undefined ? DEFAULT_HORIZON : (HORIZONS[shortest] ?? DEFAULT_HORIZON);
}

interface Levels {
  entry: { low: number; high: number };
  stopLoss: number;
  takeProfit: number[];
}

/** Every report's levels on one side of the close and inside the band, nearest first. */
function levelsAround(input: OfflineRecommendationInput, days: number) {
  const band = plausibleBand(input.lastClose, days);
  const inBand = (p: number): boolean => p > band.low * 1.1 && p < band.high * 0.95;
  const all = input.reports.flatMap((r) => [...r.supports, ...r.resistances]).filter(inBand);
  const close = input.lastClose;
  return {
    below: [...new Set(all.filter((p) => p < close))].sort((a, b) => b - a),
    above: [...new Set(all.filter((p) => p > close))].sort((a, b) => a - b),
    floor: band.low * 1.1,
    ceiling: band.high * 0.95,
  };
}

/** BUY: enter from the nearest support (at most 3 % down) to the close, stop under the next one. */
function buyLevels(input: OfflineRecommendationInput, days: number): Levels {
  const close = input.lastClose;
  const { below, above, floor, ceiling } = levelsAround(input, days);
  const low = Math.max(below[0] ?? close * 0.98, close * 0.97);
  const next = below.find((p) => p < low * 0.995);
  const stopLoss = Math.max(next === undefined ? low * 0.95 : next * 0.99, floor);
  const targets = above.filter((p) => p > close * 1.005).slice(0, 2);
  const fallback = Math.min(close + 2 * (close - stopLoss), ceiling);
  return {
    entry: { low: roundPrice(low), high: roundPrice(close) },
    stopLoss: roundPrice(stopLoss),
    takeProfit: (targets.length > 0 ? targets : [fallback]).map(roundPrice),
  };
}

/** SELL: the mirror of buyLevels around the nearest resistance. */
function sellLevels(input: OfflineRecommendationInput, days: number): Levels {
  const close = input.lastClose;
  const { below, above, floor, ceiling } = levelsAround(input, days);
  const high = Math.min(above[0] ?? close * 1.02, close * 1.03);
  const next = above.find((p) => p > high * 1.005);
  const stopLoss = Math.min(next === undefined ? high * 1.05 : next * 1.01, ceiling);
  const targets = below.filter((p) => p < close * 0.995).slice(0, 2);
  const fallback = Math.max(close - 2 * (stopLoss - close), floor);
  return {
    entry: { low: roundPrice(close), high: roundPrice(high) },
    stopLoss: roundPrice(stopLoss),
    takeProfit: (targets.length > 0 ? targets : [fallback]).map(roundPrice),
  };
}

/** The fraction of equity to trade: conviction × the limit, within the room and the risk limit. */
function tradeSize(
  input: OfflineRecommendationInput,
  score: number,
  levels: Levels,
  side: 'long' | 'short',
): number {
  const { maxPositionFraction, maxRiskPerTradeFraction } = input.riskLimits;
  const held = input.position?.side === side ? input.position.fractionOfEquity : 0;
  let size = Math.min(
    maxPositionFraction * Math.min(1, Math.abs(score)),
    maxPositionFraction - held,
  );
  if (maxRiskPerTradeFraction !== undefined) {
    const edge = side === 'long' ? levels.entry.high : levels.entry.low;
    const distance = Math.abs(edge - levels.stopLoss) / edge;
    if (distance > 0) size = Math.min(size, maxRiskPerTradeFraction / distance);
  }
  return Math.floor(size * 1000) / 1000; // down: rounding never breaks a limit
}

type Decision =
  | { action: 'HOLD'; why: string }
  | { action: 'REDUCE'; size: number }
  | { action: 'BUY' | 'SELL'; size: number; levels: Levels };

function decide(input: OfflineRecommendationInput, score: number, days: number): Decision {
  const { position } = input;
  const against =
    position !== null &&
    ((position.side === 'long' && score <= -ENTER_THRESHOLD) ||
      (position.side === 'short' && score >= ENTER_THRESHOLD));
  if (position !== null && against) {
    const share = Math.abs(score) >= FULL_REDUCE_THRESHOLD ? 1 : 0.5;
    const size = Math.floor(position.fractionOfEquity * share * 1000) / 1000;
    if (size >= MIN_SIZE) return { action: 'REDUCE', size };
  }
  if (Math.abs(score) < ENTER_THRESHOLD) {
    return { action: 'HOLD', why: 'the reports do not agree enough for a trade' };
  }
  const action = score > 0 ? 'BUY' : 'SELL';
  const levels = action === 'BUY' ? buyLevels(input, days) : sellLevels(input, days);
  const size = tradeSize(input, score, levels, action === 'BUY' ? 'long' : 'short');
  if (size < MIN_SIZE) {
    return { action: 'HOLD', why: 'the position is already at the limit the account allows' };
  }
  return { action, size, levels };
}

function readingOf(report: ReportView): string {
  const tf = report.timeframe ?? 'untimed';
  const direction = report.direction ?? report.bias ?? 'unread';
  return report.strength === undefined
    ? `${tf} ${direction}`
    : `${tf} ${direction} (${report.strength})`;
}

function citations(reports: readonly ReportView[]): LlmRecommendation['rationale']['citations'] {
  const cited = reports.map((report) => ({
    reportId: report.reportId,
    claim: `${readingOf(report)}${report.bias === undefined ? '' : `; outlook bias ${report.bias}`}.`,
  }));
  const [first, ...rest] = cited;
  if (first === undefined) throw new Error('a recommendation needs at least one report');
  return [first, ...rest.slice(0, 19)];
}

function pct(fraction: number): string {
  return `${round(fraction * 100, 1)}%`;
}

function levelsText(levels: Levels): string {
  return `Entry ${formatPrice(levels.entry.low)}-${formatPrice(levels.entry.high)}, stop ${formatPrice(levels.stopLoss)}, targets ${levels.takeProfit.map(formatPrice).join(' / ')}.`;
}

function summary(input: OfflineRecommendationInput, score: number, decision: Decision): string {
  const signed = score >= 0 ? `+${score.toFixed(2)}` : score.toFixed(2);
  const limits = input.riskLimits;
  const lines = [
    `_${OFFLINE_RECOMMENDER_LABEL}: the reports' trend readings and key levels, weighed by timeframe with fixed rules._`,
    '',
    `**${decision.action}.** The reports score ${signed} on a -1..+1 scale (${input.reports.map(readingOf).join(', ')}); a trade needs at least ${ENTER_THRESHOLD.toFixed(2)} either way. The last close at asOf is ${formatPrice(input.lastClose)}.`,
  ];
  if (decision.action === 'HOLD') lines.push('', `No trade: ${decision.why}.`);
  if (decision.action === 'REDUCE') {
    lines.push(
      '',
      `The signal runs against the open ${input.position?.side ?? ''} position: cut ${pct(decision.size)} of equity.`,
    );
  }
  if (decision.action === 'BUY' || decision.action === 'SELL') {
    lines.push(
      '',
      `${levelsText(decision.levels)} Size ${pct(decision.size)} of equity (limit ${pct(limits.maxPositionFraction)}${limits.maxRiskPerTradeFraction === undefined ? '' : `, at most ${pct(limits.maxRiskPerTradeFraction)} of equity at risk to the stop`}).`,
    );
  }
  lines.push(
    '',
    input.hasAccount
      ? `Position in the symbol: ${input.position === null ? 'none' : `${input.position.side}, ${pct(input.position.fractionOfEquity)} of equity`}.`
      : 'No account snapshot: sized against the default position limit.',
  );
  lines.push('', 'This is rule-based decision support, not financial advice.');
  return lines.join('\n');
}

function risks(input: OfflineRecommendationInput, score: number, decision: Decision): string[] {
  const out = [
    'Rule-based: the reports are read mechanically; news, liquidity and events are not weighed.',
  ];
  const sign = Math.sign(score);
  for (const report of input.reports) {
    const v = Math.sign(vote(report));
    if (sign !== 0 && v !== 0 && v !== sign) {
      out.push(
        `The ${report.timeframe ?? 'untimed'} report reads the other way: the timeframes disagree.`,
      );
    }
  }
  if (decision.action === 'BUY' || decision.action === 'SELL') {
    out.push(
      `A close beyond the stop at ${formatPrice(decision.levels.stopLoss)} invalidates the idea.`,
    );
  }
  if (!input.hasAccount)
    out.push('No account snapshot: open positions and cash were not considered.');
  return out.slice(0, 8);
}

function hold(input: OfflineRecommendationInput, score: number, why: string): LlmRecommendation {
  const decision: Decision = { action: 'HOLD', why };
  const [firstRisk = 'Rule-based recommendation.', ...restRisks] = risks(input, score, decision);
  return {
    action: 'HOLD',
    signal_strength: round(Math.min(MAX_SIGNAL_STRENGTH, Math.abs(score)), 2),
    headline: headline(input, 'HOLD'),
    horizon: horizonOf(input.reports),
    rationale: { summary: summary(input, score, decision), citations: citations(input.reports) },
    risks: [firstRisk, ...restRisks],
  };
}

function headline(input: OfflineRecommendationInput, action: string): string {
  return `${action} ${input.symbol}: ${input.reports.map(readingOf).join(', ')}`.slice(0, 200);
}

/**
 * The offline recommendation: the weighted trend score of the reports decides BUY (≥ +0.3), SELL
 * (≤ -0.3) or HOLD, REDUCE when it runs against an open position; levels from the reports' key
 * levels around the last close; size = conviction × the position limit, within the room left and
 * the per-trade risk limit. Checked against the domain invariants; a breach (which the rules
 * should never produce) degrades it to HOLD.
 */
export function buildOfflineRecommendation(input: OfflineRecommendationInput): LlmRecommendation {
  const score = round(reportScore(input.reports), 4);
  const horizon = horizonOf(input.reports);
  const decision = decide(input, score, horizon.days);
  if (decision.action === 'HOLD') return hold(input, score, decision.why);
  const [firstRisk = 'Rule-based recommendation.', ...restRisks] = risks(input, score, decision);
  const output: LlmRecommendation = {
    action: decision.action,
    signal_strength: round(Math.min(MAX_SIGNAL_STRENGTH, Math.abs(score)), 2),
    headline: headline(input, decision.action),
    ...(decision.action === 'REDUCE' ? {} : decision.levels),
    size: { fractionOfEquity: decision.size },
    horizon,
    rationale: { summary: summary(input, score, decision), citations: citations(input.reports) },
    risks: [firstRisk, ...restRisks],
  };
  const violations = recommendationViolations(output, {
    lastClose: input.lastClose,
    reportIds: input.reports.map((r) => r.reportId),
    riskLimits: input.riskLimits,
    position: input.position,
  });
  if (violations.length === 0) return output;
  return hold(input, score, `the levels the rules found break ${violations[0]?.rule ?? 'a rule'}`);
}
