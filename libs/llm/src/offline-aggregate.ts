import type { AggregateContext } from './llm-client.port';
import { formatPrice, OFFLINE_ANALYST_LABEL } from './offline-report';

/**
 * The offline analyst's aggregated report (flow 3, llm_aggregate_report_output_v1): a fixed-wording
 * synthesis of the input reports' structured details — an overall trend weighted by timeframe (the
 * longer ones set the context), the key levels of the shortest timeframe, one sentence on where
 * the timeframes agree or conflict, and one citation per input report. Deterministic: the same
 * reports always give the same bytes.
 */

type Direction = 'bullish' | 'bearish' | 'sideways';
type Strength = 'weak' | 'moderate' | 'strong';
type Bias = 'bullish' | 'bearish' | 'neutral';

interface Level {
  price: number;
  strength?: string;
  rationale: string;
}

/** What the synthesis reads of one input report (llm_report_output_v1 details), tolerantly. */
export interface AggregateInputView {
  reportId: string;
  /** The timeframe, or `aggregate` for an input without one. */
  label: string;
  /** Context weight: 5 for 1M down to 1 for 1h (and for an input without a timeframe). */
  weight: number;
  asOf: string;
  direction?: Direction;
  strength?: Strength;
  bias?: Bias;
  support: Level[];
  resistance: Level[];
  indicator?: { name: string; signal: string; comment: string; value?: number };
  risk?: string;
  horizon?: string;
  invalidation?: string;
}

const TIMEFRAME_WEIGHTS: Readonly<Record<string, number>> = {
  '1M': 5,
  '1w': 4,
  '1d': 3,
  '4h': 2,
  '1h': 1,
};
const DIRECTION_SCORE: Readonly<Record<Direction, number>> = {
  bullish: 1,
  sideways: 0,
  bearish: -1,
};
const STRENGTH_FACTOR: Readonly<Record<Strength, number>> = { weak: 0.5, moderate: 1, strong: 1.5 };
/** |score| below this is sideways; from 0.5 moderate, from 1 strong. */
const DIRECTION_THRESHOLD = 0.25;
const MAX_LEVELS = 3;

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return allowed.find((a) => a === value);
}

function levels(raw: unknown): Level[] {
  if (!Array.isArray(raw)) return [];
  const out: Level[] = [];
  for (const item of raw) {
    const level = asObject(item);
    const price = level?.['price'];
    if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) continue;
    const strength = oneOf(level?.['strength'], ['minor', 'major'] as const);
    out.push({
      price,
      rationale: str(level?.['rationale']) ?? 'level of the report',
      ...(strength === undefined ? {} : { strength }),
    });
  }
  return out;
}

function firstIndicator(raw: unknown): AggregateInputView['indicator'] {
  const first = asObject(Array.isArray(raw) ? raw[0] : undefined);
  const name = str(first?.['name']);
  const signal = oneOf(first?.['signal'], ['bullish', 'bearish', 'neutral'] as const);
  if (name === undefined || signal === undefined) return undefined;
  const value = first?.['value'];
  return {
    name,
    signal,
    comment: str(first?.['comment']) ?? 'as the report reads it',
    ...(typeof value === 'number' && Number.isFinite(value) ? { value } : {}),
  };
}

/** The view of one input report; missing or foreign fields are simply absent. */
export function aggregateInputView(input: AggregateContext['reports'][number]): AggregateInputView {
  const details = asObject(asObject(asObject(input.report)?.['output'])?.['details']);
  const trend = asObject(details?.['trend']);
  const outlook = asObject(details?.['outlook']);
  const keyLevels = asObject(details?.['keyLevels']);
  const risks = details?.['risks'];
  const view: AggregateInputView = {
    reportId: input.reportId,
    label: input.timeframe ?? 'aggregate',
    weight: (input.timeframe === undefined ? undefined : TIMEFRAME_WEIGHTS[input.timeframe]) ?? 1,
    asOf: input.asOf,
    support: levels(keyLevels?.['support']),
    resistance: levels(keyLevels?.['resistance']),
  };
  const optional = {
    direction: oneOf(trend?.['direction'], ['bullish', 'bearish', 'sideways'] as const),
    strength: oneOf(trend?.['strength'], ['weak', 'moderate', 'strong'] as const),
    bias: oneOf(outlook?.['bias'], ['bullish', 'bearish', 'neutral'] as const),
    indicator: firstIndicator(details?.['indicators']),
    risk: Array.isArray(risks) ? str(risks[0]) : undefined,
    horizon: str(outlook?.['horizon']),
    invalidation: str(outlook?.['invalidation']),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) Object.assign(view, { [key]: value });
  }
  return view;
}

/** Weighted trend score over the reports that state a direction: -1.5 .. 1.5. */
export function overallScore(views: readonly AggregateInputView[]): number {
  let sum = 0;
  let weights = 0;
  for (const view of views) {
    if (view.direction === undefined) continue;
    const factor = STRENGTH_FACTOR[view.strength ?? 'moderate'];
    sum += view.weight * DIRECTION_SCORE[view.direction] * factor;
    weights += view.weight;
  }
  return weights === 0 ? 0 : sum / weights;
}

function directionOf(score: number): Direction {
  if (score > DIRECTION_THRESHOLD) return 'bullish';
  if (score < -DIRECTION_THRESHOLD) return 'bearish';
  return 'sideways';
}

function strengthOf(score: number): Strength {
  const size = Math.abs(score);
  if (size >= 1) return 'strong';
  return size >= 0.5 ? 'moderate' : 'weak';
}

function biasOf(direction: Direction): Bias {
  return direction === 'sideways' ? 'neutral' : direction;
}

/** The shortest timeframe that names levels (the timing), else the shortest input. */
function timingView(views: readonly AggregateInputView[]): AggregateInputView | undefined {
  const byTiming = [...views].sort((a, b) => a.weight - b.weight);
  return (
    byTiming.find((v) => v.support.length + v.resistance.length > 0) ?? byTiming[0] ?? undefined
  );
}

function agreement(views: readonly AggregateInputView[], overall: Direction): string {
  const stated = views.filter((v) => v.direction !== undefined);
  if (stated.length === 0) return 'None of the reports states a trend direction.';
  const readings = stated.map((v) => `${v.label} ${v.direction ?? ''}`).join(', ');
  if (stated.every((v) => v.direction === stated[0]?.direction)) {
    return `The timeframes agree: ${readings}.`;
  }
  return `The timeframes conflict (${readings}); the longer ones set the context, so the overall view is ${overall}.`;
}

function citationClaim(view: AggregateInputView): string {
  if (view.direction === undefined) return `The ${view.label} report states no trend direction.`;
  const strength = view.strength === undefined ? '' : ` (${view.strength})`;
  const bias = view.bias === undefined ? '' : ` with a ${view.bias} outlook`;
  return `The ${view.label} report reads the trend as ${view.direction}${strength}${bias}.`;
}

function labelled(level: Level, label: string): Level {
  return { ...level, rationale: `${label}: ${level.rationale}` };
}

function risksOf(views: readonly AggregateInputView[], conflict: boolean): string[] {
  const risks: string[] = [];
  if (conflict) risks.push('The timeframes disagree: a move against the longer timeframe can run.');
  if (new Set(views.map((v) => Date.parse(v.asOf))).size > 1) {
    risks.push('The input reports describe different moments (asOf): the older ones may be stale.');
  }
  for (const view of views) if (view.risk !== undefined) risks.push(`${view.label}: ${view.risk}`);
  if (risks.length === 0) risks.push('A close beyond the key levels below ends this view.');
  return risks.slice(0, 8);
}

function markdown(
  symbol: string,
  views: readonly AggregateInputView[],
  facts: {
    direction: Direction;
    strength: Strength;
    agreement: string;
    timing?: AggregateInputView;
  },
): string {
  const lines = [
    `## ${symbol}: ${facts.direction} (${facts.strength}) across ${views.map((v) => v.label).join(', ')}`,
    '',
    `_${OFFLINE_ANALYST_LABEL}: a synthesis of ${views.length} existing report(s)._`,
    '',
    ...views.map((v) => `- ${citationClaim(v)} (${v.reportId}, as of ${v.asOf})`),
    '',
    facts.agreement,
  ];
  const timing = facts.timing;
  if (timing !== undefined && timing.support.length + timing.resistance.length > 0) {
    const list = (l: Level[]): string =>
      l.length === 0
        ? 'none named'
        : l
            .slice(0, MAX_LEVELS)
            .map((x) => formatPrice(x.price))
            .join(', ');
    lines.push(
      '',
      `**Key levels (${timing.label}, ${timing.reportId}).** Support ${list(timing.support)}; resistance ${list(timing.resistance)}.`,
    );
  }
  return lines.join('\n');
}

/** The llm_aggregate_report_output_v1 object of the offline analyst. */
export function buildOfflineAggregate(
  symbol: string,
  context: AggregateContext,
): { summary: { markdown: string }; details: Record<string, unknown> } {
  const views = context.reports.map(aggregateInputView);
  const score = overallScore(views);
  const direction = directionOf(score);
  const strength = strengthOf(score);
  const timing = timingView(views);
  const stated = new Set(views.flatMap((v) => (v.direction === undefined ? [] : [v.direction])));
  const text = agreement(views, direction);
  const agreeing = views.filter((v) => v.direction === direction).reduce((a, v) => a + v.weight, 0);
  const total = views.reduce((a, v) => a + v.weight, 0);
  const details: Record<string, unknown> = {
    trend: { direction, strength, rationale: text },
    keyLevels: {
      support: (timing?.support ?? [])
        .slice(0, MAX_LEVELS)
        .map((l) => labelled(l, timing?.label ?? '')),
      resistance: (timing?.resistance ?? [])
        .slice(0, MAX_LEVELS)
        .map((l) => labelled(l, timing?.label ?? '')),
    },
    indicators: [
      { name: 'Timeframe alignment', signal: biasOf(direction), comment: text },
      ...views.flatMap((v) =>
        v.indicator === undefined
          ? []
          : [{ ...v.indicator, comment: `${v.label}: ${v.indicator.comment}` }],
      ),
    ].slice(0, 10),
    risks: risksOf(views, stated.size > 1),
    outlook: {
      bias: biasOf(direction),
      horizon: timing?.horizon ?? `the horizon of the ${timing?.label ?? 'shortest'} report`,
      baseCase: `${direction === 'sideways' ? 'Range trading' : `A ${direction} continuation`} as the weighted timeframes read it. ${text}`,
      invalidation:
        timing?.invalidation ?? 'A close beyond the nearest key level against the overall view.',
    },
    confidence: Math.round((0.3 + 0.5 * (total === 0 ? 0 : agreeing / total)) * 100) / 100,
    citations: views.map((v) => ({ reportId: v.reportId, claim: citationClaim(v) })),
  };
  return {
    summary: {
      markdown: markdown(symbol, views, { direction, strength, agreement: text, timing }),
    },
    details,
  };
}
