import type { FlowRun, FlowStep, StepType } from '@tda/contracts';

/** A fixed clock origin for tests; decisions never read the real clock. */
export const T0 = new Date('2025-01-15T10:00:00.000Z');

export function at(seconds: number): Date {
  return new Date(T0.getTime() + seconds * 1000);
}

export function iso(seconds: number): string {
  return at(seconds).toISOString();
}

export type StepOverrides = Partial<FlowStep> & { dependsOn?: string[] };

/**
 * Inputs that satisfy the step type's inputs schema (flow_run.schema.json selects it by
 * stepType), naming the first dependencies as the upstream steps. Engine tests do not care what
 * the inputs say, only that a run built from them is a valid document.
 */
export function sampleInputs(
  stepType: StepType,
  dependsOn: readonly string[] = [],
): Record<string, unknown> {
  const [first = 'ohlcv_export:1d', second = 'charts:1d:ctpl_default_v1'] = dependsOn;
  switch (stepType) {
    case 'CHART_EXPORT':
      return { ohlcvStepId: first, chartTemplateId: 'ctpl_default_v1' };
    case 'LLM_REPORT':
      return {
        ohlcvStepId: first,
        chartsManifestStepId: second,
        llm: { promptId: 'prompt_test_v1', llmProfile: { modelName: 'gemini-2.5-flash' } },
      };
    default:
      return {};
  }
}

export function makeStep(
  overrides: StepOverrides = {},
  stepType: StepType = 'OHLCV_EXPORT',
): FlowStep {
  const type = overrides.stepType ?? stepType;
  return {
    stepType: type,
    status: 'PENDING',
    dependsOn: [],
    inputs: sampleInputs(type, overrides.dependsOn),
    outputs: {},
    createdAt: T0.toISOString(),
    attempt: 0,
    ...overrides,
  };
}

/** A run document around the given steps (status PENDING unless overridden). */
export function makeRun(
  steps: Record<string, StepOverrides>,
  overrides: Partial<FlowRun> = {},
): FlowRun {
  const built: Record<string, FlowStep> = {};
  for (const [id, step] of Object.entries(steps)) built[id] = makeStep(step);
  return {
    schemaVersion: 1,
    runId: '20250115-100000_BTC-USDT_abcde',
    flowKey: 'test_flow_v1',
    status: 'PENDING',
    createdAt: T0.toISOString(),
    updatedAt: T0.toISOString(),
    trigger: { type: 'USER', source: 'test' },
    scope: { symbol: 'BTC-USDT' },
    ownerId: 'user-1',
    steps: built,
    ...overrides,
  };
}

/** A deterministic RandomSource (mulberry32) for ids and simulations. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function statusesOf(run: FlowRun): Record<string, string> {
  return Object.fromEntries(Object.entries(run.steps).map(([id, s]) => [id, s.status]));
}
