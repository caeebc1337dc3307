import type { FlowRun, FlowStep } from '@tda/contracts';
import { sampleInputs } from '@tda/flow-engine/testing';

/** The instant every fixture defaults to, so tests that do not care get identical documents. */
export const FIXTURE_CREATED_AT = '2026-01-15T10:00:00.000Z';

export interface RunIdParts {
  /** Start of the run; its UTC date and time form the id prefix. */
  at?: Date | string;
  /** Trading symbol; '/' becomes '-' as in the runId slug. */
  symbol?: string;
  /** 3-6 lowercase letters/digits. */
  suffix?: string;
}

/** `YYYYMMDD-HHmmss_<symbolSlug>_<suffix>` (seed 001, common.schema.json RunId). */
export function makeRunId({
  at = FIXTURE_CREATED_AT,
  symbol = 'BTC-USDT',
  suffix = 'abc',
}: RunIdParts = {}): string {
  const iso = new Date(at).toISOString();
  const stamp = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`;
  return `${stamp}_${symbol.replaceAll('/', '-')}_${suffix}`;
}

/** A valid step; READY with no dependencies unless overridden. */
export function makeStep(overrides: Partial<FlowStep> = {}): FlowStep {
  const stepType = overrides.stepType ?? 'OHLCV_EXPORT';
  return {
    stepType,
    status: 'READY',
    timeframe: '1d',
    dependsOn: [],
    inputs: sampleInputs(stepType, overrides.dependsOn),
    outputs: {},
    createdAt: FIXTURE_CREATED_AT,
    attempt: 0,
    ...overrides,
  };
}

/** The steps of the default fixture: an export and the report that depends on it. */
export function defaultSteps(createdAt: string = FIXTURE_CREATED_AT): Record<string, FlowStep> {
  return {
    'ohlcv_export:1d': makeStep({ createdAt, readyAt: createdAt }),
    'llm_report:1d:prompt_day_v1': makeStep({
      stepType: 'LLM_REPORT',
      status: 'PENDING',
      dependsOn: ['ohlcv_export:1d'],
      createdAt,
    }),
  };
}

/** `count` independent READY steps `ohlcv_export:1d:v0`, `...:v1`, ... (fan-out tests). */
export function makeParallelSteps(
  count: number,
  createdAt: string = FIXTURE_CREATED_AT,
): Record<string, FlowStep> {
  const steps: Record<string, FlowStep> = {};
  for (let i = 0; i < count; i += 1) steps[`ohlcv_export:1d:v${i}`] = makeStep({ createdAt });
  return steps;
}

export type FlowRunOverrides = Partial<FlowRun> & {
  /** Used to build the runId when `runId` is not given. */
  suffix?: string;
};

/**
 * A FlowRun that validates against contracts/flow_run.schema.json. The runId is derived from
 * `createdAt`, `scope.symbol` and `suffix` unless given; `updatedAt` defaults to `createdAt`.
 */
export function makeFlowRun(overrides: FlowRunOverrides = {}): FlowRun {
  const { suffix = 'abc', ...fields } = overrides;
  const createdAt = fields.createdAt ?? FIXTURE_CREATED_AT;
  const scope = fields.scope ?? { symbol: 'BTC-USDT', timeframes: ['1d'] };
  return {
    schemaVersion: 1,
    flowKey: 'user_multi_tf_report_v1',
    status: 'RUNNING',
    createdAt,
    updatedAt: createdAt,
    startedAt: createdAt,
    trigger: { type: 'USER', source: 'test' },
    ownerId: 'user-1',
    steps: defaultSteps(createdAt),
    ...fields,
    scope,
    runId: fields.runId ?? makeRunId({ at: createdAt, symbol: scope.symbol, suffix }),
  };
}
