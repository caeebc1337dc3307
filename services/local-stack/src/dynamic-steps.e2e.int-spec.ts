import { validate, type FlowRun } from '@tda/contracts';
import { BrokerPublisher } from '@tda/messaging';
import { expectEventually } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectValidArtifacts } from './testing/artifact-checks';
import { claimsOf, startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';

/**
 * Flow 5 end to end on the emulators, offline (the deterministic analyst asks for ATR, ADX,
 * Stochastic and OBV on its timeframe): the orchestrator inserts the dynamic steps, the
 * indicators worker computes them, a follow-up report quotes the values and the recommendation
 * reads the follow-ups. The run's bound is 4 dynamic steps: two timeframes fit, three do not.
 */

const FLOW = 'recommendation_with_indicators_v1';
const AS_OF = '2026-09-20T00:00:00Z';
const report = (tf: string): string =>
  `llm_report:${tf}:prompt_multi_tf_indicators_v1:model_gemini_2_5_flash`;
const RECO = 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash';

async function readJson(h: E2eStack, uri: string | undefined): Promise<unknown> {
  return JSON.parse((await h.stack.backends.artifacts.read(uri ?? '')).toString('utf8'));
}

function dynamicSteps(run: FlowRun): string[] {
  return Object.entries(run.steps)
    .filter(([, step]) => step.addedBy !== undefined)
    .map(([id]) => id)
    .sort();
}

/** The run_advanced lines that inserted steps into `runId`. */
function expansions(h: E2eStack, runId: string): string[][] {
  return h.logs
    .withEvent('run_advanced')
    .filter((r) => r['runId'] === runId && Array.isArray(r['newlyAdded']))
    .map((r) => r['newlyAdded'] as string[]);
}

describe('flow 5: dynamic indicator steps end to end (emulators)', () => {
  let h: E2eStack;
  beforeAll(async () => {
    h = await startE2eStack({ name: 'flow5', env: { TDA_MAX_DYNAMIC_STEPS: '4' } });
  });
  afterAll(async () => {
    await h?.stack.close();
  });

  it('reports ask, indicator steps and follow-ups run, the recommendation reads the follow-ups; a duplicated step event adds nothing', async () => {
    const { run: created } = await h.api.trigger({
      flowKey: FLOW,
      scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: AS_OF, timeframes: ['1d', '4h'] },
    });
    expect(created.expansionLimits).toEqual({ maxDynamicSteps: 4, maxDepth: 1 });
    // As soon as the daily report has asked, its step event arrives twice more.
    const asked = await expectEventually(async () => {
      const run = await h.api.getRun(created.runId);
      expect(run.steps[report('1d')]?.outputs.indicatorRequests).toBeDefined();
      expect(dynamicSteps(run).length).toBeGreaterThanOrEqual(2);
      return run;
    });
    const publisher = new BrokerPublisher({ publisher: h.stack.backends.broker, prefix: h.prefix });
    const event = {
      runId: asked.runId,
      stepId: report('1d'),
      stepType: 'LLM_REPORT' as const,
      status: 'SUCCEEDED' as const,
      attempt: asked.steps[report('1d')]?.attempt ?? 1,
      at: new Date().toISOString(),
    };
    await publisher.publishStepEvent(event);
    await publisher.publishStepEvent(event);

    const run = await waitForRunStatus(h.api, created.runId, 'SUCCEEDED', 120_000);
    const added = dynamicSteps(run);
    expect(added).toHaveLength(4);
    for (const id of added) {
      expect(run.steps[id]?.status).toBe('SUCCEEDED');
      expect(run.steps[id]?.addedBy?.depth).toBe(1);
    }
    expect(expansions(h, run.runId)).toHaveLength(2);
    expect(claimsOf(h.logs, run.runId)).toEqual(
      Object.fromEntries(Object.keys(run.steps).map((id) => [id, 1])),
    );
    await expectValidArtifacts(h.stack, run);

    const followUp = added.find((id) => id.startsWith('llm_report:4h:followup_')) ?? '';
    const indicators = added.find((id) => id.startsWith('indicators_on_demand:4h:')) ?? '';
    expect(run.steps[followUp]?.addedBy?.stepId).toBe(report('4h'));
    expect(run.steps[RECO]?.inputs['reportStepIds']).toContain(followUp);
    // The follow-up quotes the computed ATR of its timeframe.
    const values = (await readJson(h, run.steps[indicators]?.outputs.gcs_uri)) as {
      indicators: { label: string; latest: { values: { value?: number } } | null }[];
    };
    const atr = values.indicators.find((i) => i.label === 'ATR(14)')?.latest?.values.value;
    expect(atr).toBeGreaterThan(0);
    const file = validate.llmReportFile(await readJson(h, run.steps[followUp]?.outputs.gcs_uri));
    if (!file.ok) throw new Error('invalid follow-up report');
    expect(file.value.output.summary.markdown).toContain('**Requested indicators.** ATR(14)');
    expect((file.value.output.details['indicators'] as unknown[])[0]).toMatchObject({
      name: 'ATR(14)',
      value: Math.round((atr ?? 0) * 100) / 100,
    });
  }, 180_000);

  it('a request over the run’s bound fails the run with EXPANSION_LIMIT_EXCEEDED', async () => {
    const { run: created } = await h.api.trigger({
      flowKey: FLOW,
      scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: AS_OF },
    });
    const run = await waitForRunStatus(h.api, created.runId, 'FAILED', 120_000);
    expect(run.error).toMatchObject({
      code: 'EXPANSION_LIMIT_EXCEEDED',
      details: { stepId: report('4h'), maxDynamicSteps: 4 },
    });
    expect(dynamicSteps(run)).toHaveLength(4);
    expect(run.steps[RECO]?.status).toBe('CANCELLED');
  }, 180_000);
});
