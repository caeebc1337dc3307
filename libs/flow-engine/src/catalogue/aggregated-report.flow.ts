import { REPORT_ID_PATTERN } from '@tda/contracts';
import { scopeSchema } from './scope-schema';
import {
  TIMEFRAMES,
  type LlmProfile,
  type LlmReportInputs,
  type RunScope,
  type Timeframe,
} from '@tda/contracts';
import { FlowRunInvalidError, InvalidRequestError } from '../errors';
import { buildStepId, modelVariant } from '../ids';
import type { FlowDefinition, FlowNeeds, StepSpecs } from './flow-definition';
import {
  llmReportProfile,
  readReportSettings,
  reportScope,
  type ReportSettings,
} from './report-steps';
import { assertKnownKeys, readTimeframes, sortLongestFirst } from './scope';

export const AGGREGATED_REPORT_FLOW_KEY = 'aggregated_report_v1';
export const AGGREGATE_PROMPT_ID = 'prompt_aggregate_v1';
export const LLM_AGGREGATE_OUTPUT_SCHEMA_ID = 'llm_aggregate_report_output_v1';
/** The stepId segment where a per-timeframe report has its timeframe. */
export const AGGREGATE_STEP_SEGMENT = 'aggregate';
const MAX_REPORTS = 10;
/** Scope fields of flow 3; reportRefs is resolved by the trigger, never given by the caller. */
const AGGREGATE_SCOPE_FIELDS = [
  'symbol',
  'asOf',
  'timeframes',
  'reportIds',
  'reportRefs',
  'modelName',
  'temperature',
  'maxOutputTokens',
] as const;

type ReportRef = NonNullable<LlmReportInputs['reportRefs']>[number];

function readReportIds(scope: RunScope): string[] | undefined {
  const raw: unknown = scope['reportIds'];
  if (raw === undefined) return undefined;
  const valid =
    Array.isArray(raw) &&
    raw.length >= 1 &&
    raw.length <= MAX_REPORTS &&
    raw.every((id) => typeof id === 'string' && REPORT_ID_PATTERN.test(id)) &&
    new Set(raw).size === raw.length;
  if (!valid) {
    throw new InvalidRequestError(
      `scope.reportIds must be 1..${MAX_REPORTS} distinct report ids (rpt_...; tda reports list)`,
      { field: 'scope.reportIds', pattern: REPORT_ID_PATTERN.source, max: MAX_REPORTS },
    );
  }
  return raw as string[];
}

function resolve(scope: RunScope): RunScope {
  assertKnownKeys(scope, AGGREGATE_SCOPE_FIELDS);
  const reportIds = readReportIds(scope);
  const resolved: RunScope = {
    ...reportScope(readReportSettings(scope), readTimeframes(scope, TIMEFRAMES)),
  };
  delete resolved['lookback'];
  if (reportIds !== undefined) resolved['reportIds'] = reportIds;
  if (scope['reportRefs'] !== undefined) resolved['reportRefs'] = scope['reportRefs'];
  return resolved;
}

/** The trigger-resolved refs, longest timeframe first (the order the prompt reads them in). */
function reportRefsOf(scope: RunScope): [ReportRef, ...ReportRef[]] {
  const raw: unknown = scope['reportRefs'];
  const refs = Array.isArray(raw) ? (raw as ReportRef[]) : [];
  const rank = (ref: ReportRef): number =>
    ref.timeframe === undefined
      ? TIMEFRAMES.length
      : sortLongestFirst(TIMEFRAMES).indexOf(ref.timeframe);
  const [first, ...rest] = [...refs].sort(
    (a, b) => rank(a) - rank(b) || (a.reportId < b.reportId ? -1 : 1),
  );
  if (first === undefined) {
    throw new FlowRunInvalidError('an aggregated report needs reportRefs resolved at trigger', {
      flowKey: AGGREGATED_REPORT_FLOW_KEY,
    });
  }
  return [first, ...rest];
}

function aggregateProfile(settings: ReportSettings): LlmProfile {
  return {
    ...llmReportProfile(settings),
    structuredOutput: { schemaId: LLM_AGGREGATE_OUTPUT_SCHEMA_ID },
  };
}

/**
 * Flow 3 (seed 001): one LLM_REPORT that synthesises existing reports of one symbol across
 * timeframes and cites which report said what. The caller names reports (scope.reportIds) or
 * takes the latest report per timeframe (scope.timeframes, default all) at or before asOf; the
 * trigger resolves either into scope.reportRefs (checked: the caller's, this symbol, not after
 * asOf) and only then builds the step, so the run records exactly which reports it read.
 */
export const aggregatedReportFlow: FlowDefinition = {
  flowKey: AGGREGATED_REPORT_FLOW_KEY,
  description:
    'One LLM report synthesising existing reports of a symbol across timeframes (explicit reportIds or the latest per timeframe at asOf), citing its sources.',
  scopeSchema: scopeSchema(AGGREGATE_SCOPE_FIELDS, { required: ['symbol'] }),
  resolveScope: resolve,
  needs(scope): FlowNeeds {
    const resolved = resolve(scope);
    const timeframes = resolved.timeframes ?? [...TIMEFRAMES];
    const reportIds = readReportIds(resolved);
    return {
      marketData: timeframes.map((timeframe: Timeframe) => ({
        symbol: resolved.symbol,
        timeframe,
      })),
      reports: {
        symbol: resolved.symbol,
        timeframes,
        ...(reportIds === undefined ? {} : { reportIds }),
      },
    };
  },
  build(scope) {
    const resolved = resolve(scope);
    const settings = readReportSettings(resolved);
    const stepId = buildStepId({
      stepType: 'LLM_REPORT',
      variant: [AGGREGATE_STEP_SEGMENT, AGGREGATE_PROMPT_ID, modelVariant(settings.modelName)],
    });
    const specs: StepSpecs = {
      [stepId]: {
        stepType: 'LLM_REPORT',
        dependsOn: [],
        inputs: {
          reportRefs: reportRefsOf(resolved),
          llm: { promptId: AGGREGATE_PROMPT_ID, llmProfile: { ...aggregateProfile(settings) } },
        },
      },
    };
    return specs;
  },
};
