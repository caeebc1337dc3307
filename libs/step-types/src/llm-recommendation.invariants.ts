import {
  validate,
  type AccountSnapshot,
  type AppliedRiskLimits,
  type LlmRecommendation,
  type LlmRecommendationFile,
} from '@tda/contracts';

/**
 * The domain rules of an LLM recommendation that its JSON Schema cannot say, checked in code after
 * the schema (the worker's structured-output check: a broken rule is invalid output, repaired once)
 * and again on the written file (the step type's artifact check). Pure.
 *
 * Every violation names a rule id, a schema path and what the rule demands, in our own words:
 * never a value of the output, because violations reach logs, the step error and the repair
 * prompt.
 */

/** maxPositionFraction when the step reads no account (no ACCOUNT_EXPORT upstream): 10 % of equity. */
export const DEFAULT_MAX_POSITION_FRACTION = 0.1;

/**
 * Plausibility band of every price level (entry, stop, targets) around the last close at asOf.
 * Up to SHORT_HORIZON_MAX_DAYS the levels lie within ±SHORT_HORIZON_BAND_FRACTION (±50 %) of the
 * last close: a swing idea whose stop or target is further away is a misread price (a wrong
 * decimal, another symbol), not an idea. Longer horizons (up to the contract's 365 days) allow a
 * factor LONG_HORIZON_BAND_FACTOR either way (a third to three times the last close).
 */
export const SHORT_HORIZON_MAX_DAYS = 90;
export const SHORT_HORIZON_BAND_FRACTION = 0.5;
export const LONG_HORIZON_BAND_FACTOR = 3;

/** Slack of the ≤ comparisons of fractions (rounding of the model's decimals). */
const EPSILON = 1e-9;

/** The price band levels must lie in, for a horizon of `days`. */
export function plausibleBand(lastClose: number, days: number): { low: number; high: number } {
  if (days <= SHORT_HORIZON_MAX_DAYS) {
    return {
      low: lastClose * (1 - SHORT_HORIZON_BAND_FRACTION),
      high: lastClose * (1 + SHORT_HORIZON_BAND_FRACTION),
    };
  }
  return { low: lastClose / LONG_HORIZON_BAND_FACTOR, high: lastClose * LONG_HORIZON_BAND_FACTOR };
}

export interface RecommendationViolation {
  /** Stable snake_case rule id. */
  rule: string;
  /** JSON Pointer of the offending field. */
  path: string;
  message: string;
}

/** The account's position in the symbol, as the rules need it. */
export interface PositionFacts {
  side: 'long' | 'short';
  fractionOfEquity: number;
}

export interface RecommendationFacts {
  /** The last close at or before asOf (the anchor of the plausibility band). */
  lastClose: number;
  /** The reportIds the inputs offered: the only ones a citation may name. */
  reportIds: readonly string[];
  /**
   * Flow 6: the urls of the news document's items, the only ones a news citation may name;
   * null = the step read no news (it may cite none); undefined = unknown (the written file does
   * not hold the news: the rule is not checked).
   */
  newsUrls?: readonly string[] | null;
  riskLimits: Pick<AppliedRiskLimits, 'maxPositionFraction' | 'maxRiskPerTradeFraction'>;
  /**
   * The position in the symbol: null = none (REDUCE is impossible); undefined = unknown (the
   * written file does not hold the account: the REDUCE rules are not checked).
   */
  position?: PositionFacts | null;
}

/** The limits the rules apply: the account's, or the default when the step reads no account. */
export function appliedRiskLimits(account: AccountSnapshot | undefined): AppliedRiskLimits {
  if (account === undefined) {
    return { source: 'default', maxPositionFraction: DEFAULT_MAX_POSITION_FRACTION };
  }
  const { maxPositionFraction, maxRiskPerTradeFraction } = account.riskLimits;
  return {
    source: 'account',
    maxPositionFraction,
    ...(maxRiskPerTradeFraction === undefined ? {} : { maxRiskPerTradeFraction }),
  };
}

/**
 * The account's position in `symbol` (null without an account or without a position): its side
 * and its share of equity (the snapshot's fractionOfEquity, else marketValue / equity).
 */
export function positionFacts(
  account: AccountSnapshot | undefined,
  symbol: string,
): PositionFacts | null {
  const position = account?.positions.find((p) => p.symbol === symbol);
  if (account === undefined || position === undefined) return null;
  const fraction =
    position.fractionOfEquity ?? (account.equity > 0 ? position.marketValue / account.equity : 0);
  return { side: position.side, fractionOfEquity: fraction };
}

type Side = 'buy' | 'sell';
type Push = (rule: string, path: string, message: string) => void;

/** The side of the market the action trades on (REDUCE: against the position; unknown: none). */
function sideOf(
  output: LlmRecommendation,
  position: PositionFacts | null | undefined,
): Side | null {
  if (output.action === 'BUY') return 'buy';
  if (output.action === 'SELL') return 'sell';
  if (output.action === 'REDUCE' && position !== null && position !== undefined) {
    return position.side === 'long' ? 'sell' : 'buy';
  }
  return null;
}

function checkPresence(output: LlmRecommendation, push: Push): void {
  const levels = ['entry', 'stopLoss', 'takeProfit', 'size'] as const;
  if (output.action === 'HOLD') {
    for (const field of levels) {
      if (output[field] !== undefined) {
        push('hold_has_no_levels', `/${field}`, `HOLD has no ${field}`);
      }
    }
    return;
  }
  if (output.action === 'BUY' || output.action === 'SELL') {
    for (const field of ['entry', 'stopLoss', 'size'] as const) {
      if (output[field] === undefined) {
        push('trade_needs_levels', `/${field}`, `${output.action} needs ${field}`);
      }
    }
  }
  if (output.action === 'REDUCE' && output.size === undefined) {
    push('reduce_needs_size', '/size', 'REDUCE needs size (the fraction of equity to cut)');
  }
}

function checkSides(output: LlmRecommendation, side: Side | null, push: Push): void {
  const { entry, stopLoss, takeProfit } = output;
  if (entry === undefined) return;
  if (entry.low > entry.high) {
    push('entry_low_not_above_high', '/entry', 'entry.low must not be above entry.high');
  }
  if (side === null) return;
  const label = output.action === 'REDUCE' ? `REDUCE (${side} side)` : output.action;
  if (side === 'buy') {
    if (stopLoss !== undefined && !(stopLoss < entry.low)) {
      push('buy_stop_below_entry', '/stopLoss', `${label}: stopLoss must be below entry.low`);
    }
    (takeProfit ?? []).forEach((target, i, all) => {
      if (!(target > entry.high)) {
        push(
          'buy_targets_above_entry',
          `/takeProfit/${i}`,
          `${label}: every takeProfit must be above entry.high`,
        );
      }
      const before = all[i - 1];
      if (before !== undefined && !(target > before)) {
        push(
          'buy_targets_ascending',
          `/takeProfit/${i}`,
          `${label}: takeProfit must ascend (nearest first)`,
        );
      }
    });
    return;
  }
  if (stopLoss !== undefined && !(stopLoss > entry.high)) {
    push('sell_stop_above_entry', '/stopLoss', `${label}: stopLoss must be above entry.high`);
  }
  (takeProfit ?? []).forEach((target, i, all) => {
    if (!(target < entry.low)) {
      push(
        'sell_targets_below_entry',
        `/takeProfit/${i}`,
        `${label}: every takeProfit must be below entry.low`,
      );
    }
    const before = all[i - 1];
    if (before !== undefined && !(target < before)) {
      push(
        'sell_targets_descending',
        `/takeProfit/${i}`,
        `${label}: takeProfit must descend (nearest first)`,
      );
    }
  });
}

/** size × |entry − stop| / entry, from the entry edge farthest from the stop (the worst fill). */
function riskFraction(output: LlmRecommendation, side: Side): number | undefined {
  const { entry, stopLoss, size } = output;
  if (entry === undefined || stopLoss === undefined || size === undefined) return undefined;
  const edge = side === 'buy' ? entry.high : entry.low;
  return (size.fractionOfEquity * Math.abs(edge - stopLoss)) / edge;
}

function checkSize(
  output: LlmRecommendation,
  facts: RecommendationFacts,
  side: Side | null,
  push: Push,
): void {
  const fraction = output.size?.fractionOfEquity;
  if (fraction === undefined) return;
  const { maxPositionFraction, maxRiskPerTradeFraction } = facts.riskLimits;
  if (output.action === 'REDUCE') {
    // Cutting a position is not capped by the limit of new positions, only by the position.
    if (facts.position === null) {
      push('reduce_needs_position', '/action', 'REDUCE needs an open position in the symbol');
    } else if (
      facts.position !== undefined &&
      fraction > facts.position.fractionOfEquity + EPSILON
    ) {
      push(
        'reduce_within_position',
        '/size/fractionOfEquity',
        "REDUCE size must not exceed the position's fraction of equity",
      );
    }
    return;
  }
  if (fraction > maxPositionFraction + EPSILON) {
    push(
      'size_within_position_limit',
      '/size/fractionOfEquity',
      'size.fractionOfEquity must not exceed riskLimits.maxPositionFraction',
    );
  }
  const risk = side === null ? undefined : riskFraction(output, side);
  if (
    maxRiskPerTradeFraction !== undefined &&
    risk !== undefined &&
    risk > maxRiskPerTradeFraction + EPSILON
  ) {
    push(
      'risk_per_trade_within_limit',
      '/size/fractionOfEquity',
      'size × |entry − stopLoss| / entry must not exceed riskLimits.maxRiskPerTradeFraction',
    );
  }
}

function checkBand(output: LlmRecommendation, lastClose: number, push: Push): void {
  const band = plausibleBand(lastClose, output.horizon.days);
  const levels: [string, number | undefined][] = [
    ['/entry/low', output.entry?.low],
    ['/entry/high', output.entry?.high],
    ['/stopLoss', output.stopLoss],
    ...(output.takeProfit ?? []).map((t, i): [string, number] => [`/takeProfit/${i}`, t]),
  ];
  const days =
    output.horizon.days <= SHORT_HORIZON_MAX_DAYS
      ? `${SHORT_HORIZON_MAX_DAYS} days or less`
      : `more than ${SHORT_HORIZON_MAX_DAYS} days`;
  for (const [path, level] of levels) {
    if (level !== undefined && (level < band.low || level > band.high)) {
      push(
        'levels_within_band',
        path,
        `every price level must lie within the plausibility band around the last close (horizon ${days})`,
      );
    }
  }
}

function checkNewsCitations(
  output: LlmRecommendation,
  newsUrls: readonly string[] | null | undefined,
  push: Push,
): void {
  if (newsUrls === undefined) return;
  const known = new Set(newsUrls ?? []);
  (output.rationale.newsCitations ?? []).forEach((citation, i) => {
    if (!known.has(citation.url)) {
      push(
        'news_citations_cite_inputs',
        `/rationale/newsCitations/${i}/url`,
        newsUrls === null
          ? 'this step read no news: omit newsCitations'
          : 'every news citation must name the url of an item in the news document, exactly',
      );
    }
  });
}

function checkCitations(output: LlmRecommendation, reportIds: readonly string[], push: Push): void {
  const known = new Set(reportIds);
  output.rationale.citations.forEach((citation, i) => {
    if (!known.has(citation.reportId)) {
      push(
        'citations_cite_inputs',
        `/rationale/citations/${i}/reportId`,
        'every citation must name a reportId listed in the inputs',
      );
    }
  });
}

/**
 * Every rule `output` breaks given the facts of its step ([] when it is acceptable):
 * HOLD has no levels, BUY/SELL have entry, stop and size; entry.low ≤ entry.high; the stop and
 * the targets on the action's side of the entry (REDUCE: against the position), targets nearest
 * first; the size within the position limit and the per-trade risk limit (REDUCE: within the
 * position instead, and only with a position); every level within the plausibility band around the
 * last close; every citation names an input report, every news citation an item of the news.
 */
export function recommendationViolations(
  output: LlmRecommendation,
  facts: RecommendationFacts,
): RecommendationViolation[] {
  const violations: RecommendationViolation[] = [];
  const push: Push = (rule, path, message) => violations.push({ rule, path, message });
  const side = sideOf(output, facts.position);
  checkPresence(output, push);
  checkSides(output, side, push);
  checkSize(output, facts, side, push);
  checkBand(output, facts.lastClose, push);
  checkCitations(output, facts.reportIds, push);
  checkNewsCitations(output, facts.newsUrls, push);
  return violations;
}

/** The field names of llm_recommendation.schema.json: the only keys a reported path may show. */
const OUTPUT_FIELDS = new Set([
  'action',
  'signal_strength',
  'headline',
  'entry',
  'low',
  'high',
  'stopLoss',
  'takeProfit',
  'size',
  'fractionOfEquity',
  'horizon',
  'days',
  'label',
  'rationale',
  'summary',
  'citations',
  'newsCitations',
  'url',
  'reportId',
  'claim',
  'risks',
]);

/** A contract issue's path with model-chosen keys replaced by `*`. */
function safePath(path: string): string {
  const segments = path
    .split('/')
    .slice(1)
    .filter((s) => s !== '');
  if (segments.length === 0) return '/';
  return segments
    .map((s) => (/^(0|[1-9][0-9]{0,5})$/.test(s) || OUTPUT_FIELDS.has(s) ? `/${s}` : '/*'))
    .join('');
}

/**
 * What the worker's structured-output check runs on a registry-schema-valid output: the contract
 * (llm_recommendation.schema.json is stricter than the model's schema subset: lengths, patterns,
 * no extra fields), then the domain rules. Contract issues keep only the path and the keyword
 * (an ajv message may quote a model-chosen key).
 */
export function recommendationOutputViolations(
  output: unknown,
  facts: RecommendationFacts,
): RecommendationViolation[] {
  const checked = validate.llmRecommendation(output);
  if (checked.ok) return recommendationViolations(checked.value, facts);
  return checked.issues.map((issue) => ({
    rule: 'contract',
    path: safePath(issue.path),
    message: `must satisfy '${issue.keyword}' of llm_recommendation.schema.json`,
  }));
}

/**
 * The artifact check of an llm_recommendation_file: the rules that the file itself can prove
 * (its lastClose, its input reports, the limits it records; not the account's position), unique
 * input reportIds, and schemaVersion = the N of its schemaId.
 */
export function llmRecommendationFileProblem(file: LlmRecommendationFile): string | undefined {
  const { metadata } = file;
  if (!metadata.schemaId.endsWith(`_v${metadata.schemaVersion}`)) {
    return `metadata.schemaVersion ${metadata.schemaVersion} does not match schemaId ${metadata.schemaId}`;
  }
  const reportIds = metadata.inputs.reports.map((r) => r.reportId);
  if (new Set(reportIds).size !== reportIds.length)
    return 'metadata.inputs.reports names a reportId twice';
  const violations = recommendationViolations(file.output, {
    lastClose: metadata.lastClose,
    reportIds,
    // A file without the limits it was checked against proves only the contract's bound.
    riskLimits: metadata.riskLimits ?? { maxPositionFraction: 1 },
  });
  if (violations.length === 0) return undefined;
  const rules = [...new Set(violations.map((v) => v.rule))];
  return `output breaks ${rules.join(', ')}`;
}
