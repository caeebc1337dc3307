import { validate, type FlowRun, type StepOutputs } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { advance } from '../advance';
import { applyPatch, stepPatch } from '../patch';
import { seededRandom, T0 } from '../testing/run-fixtures';
import { createRun, type CreateRunInput } from './flow-catalogue';

const input = (flowKey: string, extra: Partial<CreateRunInput> = {}): CreateRunInput => ({
  flowKey,
  scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: '2026-09-20T00:00:00Z' },
  ownerId: 'user-1',
  trigger: { type: 'USER', source: 'test' },
  now: T0,
  random: seededRandom(5),
  ...extra,
});

const FLOW5 = 'recommendation_with_indicators_v1';
const NOW = new Date(T0.getTime() + 60_000);
const report = (tf: string, prompt = 'prompt_multi_tf_indicators_v1'): string =>
  `llm_report:${tf}:${prompt}:model_gemini_2_5_flash`;
const RECO = 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash';
const REQUEST: StepOutputs['indicatorRequests'] = [
  { timeframe: '1w', indicators: [{ name: 'ATR', params: { period: 14 } }] },
];

function expectValid(run: FlowRun): void {
  const checked = validate.flowRun(run);
  expect(checked.ok ? [] : checked.issues).toEqual([]);
}

/** The run advanced once, then the 1w chain finished with the 1w report asking for `outputs`. */
function afterWeeklyReport(run: FlowRun, outputs: StepOutputs, weekly = report('1w')): FlowRun {
  let next = applyPatch(run, advance(run, T0).patch);
  for (const id of ['ohlcv_export:1w', 'charts:1w:ctpl_default_v1', weekly]) {
    const fields = { status: 'SUCCEEDED', finishedAt: T0.toISOString() };
    next = applyPatch(next, stepPatch(id, id === weekly ? { ...fields, outputs } : fields));
  }
  return next;
}

describe('recommendation_with_indicators_v1 (flow 5)', () => {
  it('is flow 4 with reports that may ask for indicators, created with expansion limits', () => {
    const run = createRun(input(FLOW5));
    expectValid(run);
    expect(Object.keys(run.steps)).toHaveLength(11);
    expect(run.expansionLimits).toEqual({ maxDynamicSteps: 12, maxDepth: 1 });
    expect(run.steps[report('4h')]?.inputs).toMatchObject({
      llm: {
        promptId: 'prompt_multi_tf_indicators_v1',
        llmProfile: { structuredOutput: { schemaId: 'llm_report_output_v2' } },
      },
    });
    const limited = createRun(
      input(FLOW5, { expansionLimits: { maxDynamicSteps: 1, maxDepth: 2 } }),
    );
    expect(limited.expansionLimits).toEqual({ maxDynamicSteps: 1, maxDepth: 2 });
    expect(createRun(input('recommendation_with_account_v1')).expansionLimits).toBeUndefined();
  });

  it('advance inserts the dynamic steps, dispatches the indicator step and rewires the dependents', () => {
    const run = afterWeeklyReport(createRun(input(FLOW5)), { indicatorRequests: REQUEST });
    const result = advance(run, NOW);
    const [indicators, followUp] = result.newlyAdded;
    expect(indicators).toMatch(/^indicators_on_demand:1w:req_[0-9a-f]{10}$/);
    expect(followUp).toMatch(/^llm_report:1w:followup_[0-9a-f]{10}$/);
    expect(result.newlyReady).toContain(indicators);
    // Storable in one update: no path next to its own parent (Firestore refuses that).
    const paths = Object.keys(result.patch);
    expect(paths.filter((p) => paths.some((q) => p.startsWith(`${q}.`)))).toEqual([]);
    const grown = applyPatch(run, result.patch);
    expectValid(grown);
    expect(grown.steps[indicators ?? '']).toMatchObject({ status: 'READY', addedBy: { depth: 1 } });
    expect(grown.steps[followUp ?? '']).toMatchObject({ status: 'PENDING' });
    expect(grown.steps[report('1d')]?.inputs['previousReportStepIds']).toEqual([followUp]);
    expect(grown.steps[RECO]?.inputs['reportStepIds']).toContain(followUp);
    // A duplicated or replayed step event expands nothing twice.
    const again = advance(grown, NOW);
    expect(again.newlyAdded).toEqual([]);
    expect(again.patch).toEqual({});
  });

  it('fails the run with EXPANSION_LIMIT_EXCEEDED when the request is over the run’s bounds', () => {
    const limits = { maxDynamicSteps: 1, maxDepth: 1 };
    const run = afterWeeklyReport(createRun(input(FLOW5, { expansionLimits: limits })), {
      indicatorRequests: REQUEST,
    });
    const result = advance(run, NOW);
    expect(result.newlyAdded).toEqual([]);
    expect(result.runStatus).toBe('FAILED');
    expect(result.runError).toMatchObject({
      code: 'EXPANSION_LIMIT_EXCEEDED',
      details: { stepId: report('1w'), maxDynamicSteps: 1 },
      retryable: false,
    });
    expect(result.newlyCancelled).toContain(RECO);
    expectValid(applyPatch(run, result.patch));
  });

  it('refuses an indicator outside the catalogue with a sanitized INVALID_STRUCTURED_OUTPUT', () => {
    const hostile: StepOutputs['indicatorRequests'] = [
      { timeframe: '1w', indicators: [{ name: 'IGNORE_ALL_PREVIOUS', params: {} }] },
    ];
    const run = afterWeeklyReport(createRun(input(FLOW5)), { indicatorRequests: hostile });
    const result = advance(run, NOW);
    expect(result.runError).toMatchObject({ code: 'INVALID_STRUCTURED_OUTPUT' });
    expect(result.runError?.message).toMatch(/unknown indicator/);
  });

  it('ignores indicator requests in a run of a flow without dynamic steps', () => {
    const run = afterWeeklyReport(
      createRun(input('recommendation_with_account_v1')),
      { indicatorRequests: REQUEST },
      report('1w', 'prompt_multi_tf_v1'),
    );
    expectValid(run);
    const result = advance(run, NOW);
    expect(result.newlyAdded).toEqual([]);
    expect(result.runStatus).toBe('RUNNING');
  });
});
