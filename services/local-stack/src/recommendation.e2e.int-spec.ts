import { STEP_TYPES, validate, type FlowRun } from '@tda/contracts';
import { reportIdFor } from '@tda/flow-engine';
import {
  FakeGeminiServer,
  fakeReply,
  textResponseBody,
  validAggregateOutput,
  validRecommendationOutput,
  validReportOutput,
} from '@tda/llm/testing';
import { BrokerPublisher, stepEventsSubscription, stepReadySubscription } from '@tda/messaging';
import type { ReportIndexEntry } from '@tda/contracts';
import { expectEventually } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectValidArtifacts } from './testing/artifact-checks';
import { claimsOf, startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';

/**
 * Flows 4 and 3 end to end on the emulators with every service composed as `npm start` does:
 * the recommendation flow against the paper account `demo` (created by the stack), then an
 * aggregated report over the reports it produced. Once offline (the deterministic analyst and
 * recommender) and once against a scripted generateContent endpoint, where duplicated step-ready
 * messages and a replay after the end must add zero model calls and zero index documents.
 */

const SYMBOL = 'BTC-USDT';
const AS_OF = '2026-09-20T00:00:00Z';
/** The index keeps instants in Date#toISOString form (its keyset sorts them as text). */
const INDEX_AS_OF = new Date(AS_OF).toISOString();
const RECO = 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash';
const REPORTS = ['1w', '1d', '4h'].map(
  (tf) => `llm_report:${tf}:prompt_multi_tf_v1:model_gemini_2_5_flash`,
);

async function runFlow4(h: E2eStack): Promise<FlowRun> {
  const { run } = await h.api.trigger({
    flowKey: 'recommendation_with_account_v1',
    scope: { symbol: SYMBOL, accountId: 'demo' },
  });
  return waitForRunStatus(h.api, run.runId, 'SUCCEEDED', 90_000);
}

/** The index entries of one run (reports and recommendations), straight from the store. */
async function indexOf(h: E2eStack, run: FlowRun): Promise<{ reports: string[]; recos: string[] }> {
  const index = h.stack.backends.reportIndex;
  const reports = await index.listReports({ ownerId: run.ownerId, limit: 100 });
  const recos = await index.listRecommendations({ ownerId: run.ownerId, limit: 100 });
  return {
    reports: reports.reports.filter((r) => r.runId === run.runId).map((r) => r.reportId),
    recos: recos.recommendations.filter((r) => r.runId === run.runId).map((r) => r.recoId),
  };
}

/** The run's recommendation and report index entries exist, once, with the run's asOf. */
async function expectIndexed(h: E2eStack, run: FlowRun): Promise<void> {
  const expected = REPORTS.map((stepId) => reportIdFor(run.runId, stepId)).sort();
  await expectEventually(async () => {
    const { reports, recos } = await indexOf(h, run);
    expect(reports.sort()).toEqual(expected);
    expect(recos).toEqual([run.steps[RECO]?.outputs.recommendationId]);
  });
  for (const stepId of REPORTS) {
    const reportId = run.steps[stepId]?.outputs.reportId ?? '';
    const entry: ReportIndexEntry | null = await h.stack.backends.reportIndex.getReport(reportId);
    expect(entry).toMatchObject({
      runId: run.runId,
      stepId,
      asOf: INDEX_AS_OF,
      symbolKey: 'BTCUSDT',
    });
  }
}

describe('flows 4 and 3 end to end (emulators)', () => {
  describe('offline analyst and recommender (no LLM credentials)', () => {
    let h: E2eStack;
    let flow4: FlowRun | undefined;
    beforeAll(async () => {
      h = await startE2eStack({ name: 'flow4' });
    });
    afterAll(async () => {
      await h?.stack.close();
    });

    it('flow 4: reports + account snapshot -> a recommendation, every artifact valid and cut at asOf', async () => {
      const run = await runFlow4(h);
      flow4 = run;
      expect(run.scope.asOf).toBe(AS_OF);
      expect(Object.keys(run.steps)).toHaveLength(11);
      await expectValidArtifacts(h.stack, run);
      await expectIndexed(h, run);
      const file = validate.llmRecommendationFile(
        JSON.parse(
          (await h.stack.backends.artifacts.read(run.steps[RECO]?.outputs.gcs_uri ?? '')).toString(
            'utf8',
          ),
        ),
      );
      if (!file.ok) throw new Error('invalid recommendation');
      expect(file.value.metadata).toMatchObject({
        provider: 'offline',
        asOf: AS_OF,
        symbol: SYMBOL,
        inputs: { accountId: 'demo' },
      });
      const cited = file.value.output.rationale.citations.map((c) => c.reportId);
      const inputs = REPORTS.map((s) => reportIdFor(run.runId, s));
      for (const id of cited) expect(inputs).toContain(id);
      expect(claimsOf(h.logs, run.runId)).toEqual(
        Object.fromEntries(Object.keys(run.steps).map((id) => [id, 1])),
      );
    }, 120_000);

    it('flow 3: the latest report per timeframe at asOf, aggregated with citations', async () => {
      if (flow4 === undefined) throw new Error('flow 4 did not run');
      const { run: created } = await h.api.trigger({
        flowKey: 'aggregated_report_v1',
        scope: { symbol: 'BTC/USDT', timeframes: ['1w', '1d', '4h'] },
      });
      const run = await waitForRunStatus(h.api, created.runId, 'SUCCEEDED', 60_000);
      const refs = (run.scope['reportRefs'] as { reportId: string }[]).map((r) => r.reportId);
      expect(refs).toEqual(REPORTS.map((s) => flow4?.steps[s]?.outputs.reportId));
      await expectValidArtifacts(h.stack, run);
      const [stepId] = Object.keys(run.steps);
      const reportId = run.steps[stepId ?? '']?.outputs.reportId ?? '';
      await expectEventually(async () => {
        const entry = await h.stack.backends.reportIndex.getReport(reportId);
        expect(entry).toMatchObject({ runId: run.runId, asOf: INDEX_AS_OF });
        expect(entry?.timeframe).toBeUndefined();
      });
    }, 90_000);
  });

  describe('Gemini against a scripted generateContent endpoint', () => {
    const apiKey = 'fake-gemini-key-for-flow4-e2e';
    let fake: FakeGeminiServer;
    let h: E2eStack;
    let flow4: FlowRun | undefined;
    beforeAll(async () => {
      fake = await FakeGeminiServer.start({ apiKey });
      h = await startE2eStack({
        name: 'flow4g',
        env: { GEMINI_API_KEY: apiKey, TDA_GEMINI_BASE_URL: fake.baseUrl },
      });
    });
    afterAll(async () => {
      await h?.stack.close();
      await fake?.close();
    });

    it('four model calls; duplicated step-ready messages and a replay add no call and no index entry', async () => {
      const startedAt = new Date();
      const { run: created } = await h.api.trigger({
        flowKey: 'recommendation_with_account_v1',
        scope: { symbol: SYMBOL, accountId: 'demo' },
      });
      // Replies in arrival order: the three chained reports, then the recommendation citing them.
      const reportIds = REPORTS.map((s) => reportIdFor(created.runId, s));
      fake.enqueue(
        ...REPORTS.map((s) =>
          fakeReply.ok(textResponseBody(JSON.stringify(validReportOutput(`## ${s}\n\nBody.`)))),
        ),
        fakeReply.ok(
          textResponseBody(
            JSON.stringify(
              validRecommendationOutput(reportIds, {
                entry: { low: 80_000, high: 81_500 },
                stopLoss: 77_000,
                takeProfit: [85_000, 88_000],
                size: { fractionOfEquity: 0.05 },
              }),
            ),
          ),
        ),
      );
      const run = await waitForRunStatus(h.api, created.runId, 'SUCCEEDED', 90_000);
      expect(fake.callCount).toBe(4);
      await expectValidArtifacts(h.stack, run);
      await expectIndexed(h, run);
      const claims = claimsOf(h.logs, run.runId);
      const index = await indexOf(h, run);
      const noops = (): number =>
        h.logs
          .withEvent('message_acked')
          .filter((r) => r['runId'] === run.runId && r['outcome'] === 'noop').length;

      // Every step-ready message again (a duplicate delivery of each dispatch).
      const publisher = new BrokerPublisher({
        publisher: h.stack.backends.broker,
        prefix: h.prefix,
      });
      const before = noops();
      for (const [stepId, step] of Object.entries(run.steps)) {
        await publisher.publishStepReady({
          runId: run.runId,
          stepId,
          stepType: step.stepType,
          attempt: step.attempt,
          dispatchedAt: new Date().toISOString(),
        });
      }
      await expectEventually(() => expect(noops() - before).toBeGreaterThanOrEqual(11), {
        timeoutMs: 20_000,
      });

      // A replay of every subscription back to before the run.
      const subscriptions = [
        ...STEP_TYPES.map((t) => stepReadySubscription(t, h.prefix)),
        stepEventsSubscription(h.prefix),
      ];
      const beforeReplay = noops();
      for (const subscription of subscriptions) {
        await h.api.replay({ subscription, time: startedAt.toISOString() });
      }
      await expectEventually(() => expect(noops() - beforeReplay).toBeGreaterThanOrEqual(11 + 11), {
        timeoutMs: 30_000,
      });
      expect(fake.callCount).toBe(4);
      expect(claimsOf(h.logs, run.runId)).toEqual(claims);
      expect(await indexOf(h, run)).toEqual(index);
      flow4 = run;
    }, 150_000);

    it('flow 3 over the flow 4 reports: one model call citing them, a Gemini report indexed', async () => {
      if (flow4 === undefined) throw new Error('flow 4 did not run');
      const reportIds = REPORTS.map((s) => reportIdFor(flow4?.runId ?? '', s));
      fake.enqueue(fakeReply.ok(textResponseBody(JSON.stringify(validAggregateOutput(reportIds)))));
      const { run: created } = await h.api.trigger({
        flowKey: 'aggregated_report_v1',
        scope: { symbol: SYMBOL, reportIds },
      });
      const run = await waitForRunStatus(h.api, created.runId, 'SUCCEEDED', 60_000);
      expect(fake.callCount).toBe(5);
      await expectValidArtifacts(h.stack, run);
      const [stepId = ''] = Object.keys(run.steps);
      const file = validate.llmReportFile(
        JSON.parse(
          (
            await h.stack.backends.artifacts.read(run.steps[stepId]?.outputs.gcs_uri ?? '')
          ).toString('utf8'),
        ),
      );
      if (!file.ok) throw new Error('invalid aggregated report');
      expect(file.value.metadata).toMatchObject({ provider: 'gemini', asOf: AS_OF });
      expect(file.value.metadata.inputs.reportRefs?.map((r) => r.reportId)).toEqual(reportIds);
      await expectEventually(async () => {
        const entry = await h.stack.backends.reportIndex.getReport(
          run.steps[stepId]?.outputs.reportId ?? '',
        );
        expect(entry).toMatchObject({ runId: run.runId, provider: 'gemini' });
      });
    }, 90_000);
  });
});
