import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { STEP_TYPES, validate, type FlowRun, type LlmReportFile } from '@tda/contracts';
import { FakeGeminiServer, fakeReply, textResponseBody, validReportOutput } from '@tda/llm/testing';
import { stepEventsSubscription, stepReadySubscription } from '@tda/messaging';
import type { MemoryLogger } from '@tda/observability';
import type { ApiClient, ReplayAnswer } from '@tda/service-cli';
import { expectEventually } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from './local-stack';
import { claimsOf, startE2eStack, waitForRunStatus } from './testing/e2e-stack';

/**
 * Recovery operations end to end on the real emulators with the real services (orchestrator,
 * OHLCV, chart and LLM workers; the Gemini client against a local fake of generateContent so a
 * model failure can be scripted), driven through the HTTP API:
 *  1. flow 1 FAILS at the 1M report (the model answers 403) → retry → SUCCEEDED, upstream steps
 *     not executed again;
 *  2. rerun from the 1w report → a new run SUCCEEDS with every other step reused (no claims, the
 *     same gcs_uris, one model call);
 *  3. replay: a seek of every step-ready subscription and of step-events back to before those
 *     runs redelivers their messages, each one a no-op: run versions, artifacts, claims and
 *     model calls unchanged; the dry run lists the steps with 'noop: the run is SUCCEEDED'.
 */

const SYMBOL = 'BTC-USDT';
const OHLCV_1M = 'ohlcv_export:1M';
const OHLCV_1W = 'ohlcv_export:1w';
const CHARTS_1M = 'charts:1M:ctpl_default_v1';
const CHARTS_1W = 'charts:1w:ctpl_default_v1';
const REPORT_1M = 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash';
const REPORT_1W = 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash';
const API_KEY = 'fake-gemini-key-for-recovery-e2e';

function reply(markdown: string): ReturnType<typeof fakeReply.ok> {
  return fakeReply.ok(textResponseBody(JSON.stringify(validReportOutput(markdown))));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('recovery operations end to end (emulators)', () => {
  const startedAt = new Date(Date.now() - 2_000);
  let fake: FakeGeminiServer;
  let stack: LocalStack;
  let api: ApiClient;
  let logs: MemoryLogger;
  let prefix: string;
  let retried: FlowRun | undefined;
  let rerun: FlowRun | undefined;

  beforeAll(async () => {
    fake = await FakeGeminiServer.start({ apiKey: API_KEY });
    ({ stack, api, logs, prefix } = await startE2eStack({
      name: 'recovery',
      env: { GEMINI_API_KEY: API_KEY, TDA_GEMINI_BASE_URL: fake.baseUrl },
    }));
  });

  afterAll(async () => {
    await stack?.close();
    await fake?.close();
  });

  const waitFor = (runId: string, status: FlowRun['status']): Promise<FlowRun> =>
    waitForRunStatus(api, runId, status);

  const report = async (uri: string): Promise<LlmReportFile> => {
    const checked = validate.llmReportFile(
      JSON.parse((await stack.backends.artifacts.read(uri)).toString('utf8')),
    );
    if (!checked.ok) throw new Error(`invalid report ${uri}`);
    return checked.value;
  };

  it('retries a run that FAILED at the 1M report (model 403) into SUCCEEDED without re-executing the upstream steps', async () => {
    fake.enqueue(fakeReply.error(403, 'PERMISSION_DENIED', 'The caller does not have permission'));
    const { run } = await api.trigger({
      flowKey: 'scheduled_month_week_report_v1',
      scope: { symbol: SYMBOL },
    });
    const failed = await waitFor(run.runId, 'FAILED');
    expect(failed.steps[REPORT_1M]?.error?.code).toBe('LLM_UNAVAILABLE');
    expect(failed.steps[REPORT_1W]?.status).toBe('CANCELLED');
    expect(failed.error?.details).toMatchObject({ stepId: REPORT_1M });
    expect(fake.callCount).toBe(1);
    // Fail-fast leaves a sibling that was already running to finish (or stop at its heartbeat);
    // a retry waits for that (409 steps_running otherwise).
    await expectEventually(
      async () => {
        const current = await api.getRun(run.runId);
        expect(Object.values(current.steps).filter((s) => s.status === 'RUNNING')).toEqual([]);
      },
      { timeoutMs: 30_000, intervalMs: 150 },
    );

    fake.enqueue(
      reply(`## ${SYMBOL} monthly (1M)\n\nRetried month.`),
      reply(`## ${SYMBOL} weekly\n\nWeek.`),
    );
    const restarted = await api.retry(run.runId, REPORT_1M);
    expect(restarted.status).toBe('RUNNING');
    expect(restarted.steps[REPORT_1M]?.status).toBe('READY');
    expect(restarted.steps[REPORT_1W]?.status).toBe('PENDING');
    // A second click is answered with the run and changes nothing.
    expect((await api.retry(run.runId, REPORT_1M)).runId).toBe(run.runId);

    retried = await waitFor(run.runId, 'SUCCEEDED');
    expect(validate.flowRun(retried).ok).toBe(true);
    expect(retried.progress).toMatchObject({ total: 6, succeeded: 6 });
    expect(retried.error).toBeUndefined();
    expect(retried.steps[REPORT_1M]?.['retryHistory']).toEqual([
      expect.objectContaining({
        status: 'FAILED',
        attempt: 1,
        error: expect.objectContaining({ code: 'LLM_UNAVAILABLE' }),
      }),
    ]);
    expect(retried['retryHistory']).toHaveLength(1);
    const claims = claimsOf(logs, run.runId);
    expect(claims[REPORT_1M]).toBe(2);
    expect(claims[REPORT_1W]).toBe(1);
    expect(claims[OHLCV_1M]).toBe(1);
    expect(claims[OHLCV_1W]).toBe(1);
    expect(claims[CHARTS_1M]).toBe(1);
    expect(fake.callCount).toBe(3);
    const month = await report(retried.steps[REPORT_1M]?.outputs.gcs_uri ?? '');
    expect(month.metadata).toMatchObject({ runId: run.runId, stepId: REPORT_1M });
    expect(month.output.summary.markdown).toContain('Retried month.');
  }, 120_000);

  it('reruns from the 1w report: a new run SUCCEEDS, every upstream step reused (no claims, same gcs_uri)', async () => {
    const source = retried;
    if (source === undefined) throw new Error('the retry test did not finish');
    fake.enqueue(reply(`## ${SYMBOL} weekly (1w)\n\nRERUN-WEEK-5c1d.`));
    const created = await api.rerun(source.runId, REPORT_1W);
    expect(created.runId).not.toBe(source.runId);
    expect(created.trigger).toMatchObject({
      type: 'SYSTEM',
      rerunOf: { runId: source.runId, fromStepId: REPORT_1W },
    });
    rerun = await waitFor(created.runId, 'SUCCEEDED');
    expect(validate.flowRun(rerun).ok).toBe(true);

    // Only the 1w report was claimed (executed) in the new run; one model call.
    expect(claimsOf(logs, rerun.runId)).toEqual({ [REPORT_1W]: 1 });
    expect(fake.callCount).toBe(4);
    for (const stepId of [OHLCV_1M, OHLCV_1W, CHARTS_1M, CHARTS_1W, REPORT_1M]) {
      const step = rerun.steps[stepId];
      expect(step?.status).toBe('SUCCEEDED');
      expect(step?.outputs.gcs_uri).toBe(source.steps[stepId]?.outputs.gcs_uri);
      expect(step?.outputs.execution?.['reusedFrom']).toEqual({
        runId: source.runId,
        stepId,
        sourceRunId: source.runId,
      });
    }
    const weekUri = rerun.steps[REPORT_1W]?.outputs.gcs_uri ?? '';
    expect(weekUri).toBe(`gs://tda-artifacts/runs/${rerun.runId}/1w/${REPORT_1W}.json`);
    const week = await report(weekUri);
    expect(week.metadata).toMatchObject({
      runId: rerun.runId,
      stepId: REPORT_1W,
      inputs: {
        ohlcvGcsUri: source.steps[OHLCV_1W]?.outputs.gcs_uri,
        chartsManifestGcsUri: source.steps[CHARTS_1W]?.outputs.gcs_uri,
        previousReportGcsUris: [source.steps[REPORT_1M]?.outputs.gcs_uri],
      },
    });
    expect(week.output.summary.markdown).toContain('RERUN-WEEK-5c1d');
    // Nothing but the new report was written under the new run.
    const runDir = join(stack.dataDir, 'tda-artifacts', 'runs', rerun.runId);
    expect(filesUnder(runDir).map((f) => f.slice(runDir.length + 1))).toEqual([
      join('1w', `${REPORT_1W}.json`),
    ]);
  }, 120_000);

  it('replays every step-ready subscription and step-events over the finished runs with zero side effects', async () => {
    const runs = [retried, rerun].flatMap((r) => (r === undefined ? [] : [r]));
    expect(runs).toHaveLength(2);
    const ours = new Set(runs.map((r) => r.runId));
    const time = startedAt.toISOString();
    const subscriptions = [
      ...STEP_TYPES.map((t) => stepReadySubscription(t, prefix)),
      stepEventsSubscription(prefix),
    ];

    // Dry runs: what would be redelivered for our runs, each a no-op.
    const expected = new Map<string, number>();
    for (const subscription of subscriptions) {
      const answer: ReplayAnswer = await api.replay({ subscription, time, dryRun: true });
      expect(answer).toMatchObject({ dryRun: true, seeked: false });
      const steps = (answer.steps ?? []).filter((s) => ours.has(s.runId));
      const events = (answer.runs ?? []).filter((r) => ours.has(r.runId));
      for (const step of steps) expect(step.summary).toBe('noop: the run is SUCCEEDED');
      for (const run of events) {
        expect(run.summary).toBe('noop: the run is SUCCEEDED, advancing it writes nothing');
      }
      expected.set(subscription, steps.length + events.reduce((n, r) => n + r.events.length, 0));
    }
    // Six steps in the retried run (the 1M report twice over readyAt: counted once) and one
    // executed step in the rerun: every step-ready dispatch of them is listed.
    expect(expected.get(stepReadySubscription('LLM_REPORT', prefix))).toBe(3);
    expect(expected.get(stepReadySubscription('CHART_EXPORT', prefix))).toBe(2);
    expect(expected.get(stepReadySubscription('OHLCV_EXPORT', prefix))).toBe(2);
    expect(expected.get(stepEventsSubscription(prefix))).toBeGreaterThanOrEqual(7);

    const versions = await Promise.all(
      runs.map(async (r) => (await stack.backends.store.get(r.runId))?.version),
    );
    const files = filesUnder(stack.dataDir).length;
    const claims = logs.withEvent('step_claimed').length;
    const modelCalls = fake.callCount;
    const advancedOf = (): number =>
      logs.withEvent('run_advanced').filter((r) => ours.has(String(r['runId']))).length;
    const advanced = advancedOf();
    const noopsOn = (subscription: string): number =>
      logs
        .withEvent('message_acked')
        .filter(
          (r) =>
            r['subscription'] === subscription &&
            ours.has(String(r['runId'])) &&
            r['outcome'] === 'noop',
        ).length;
    const before = new Map(subscriptions.map((s) => [s, noopsOn(s)]));

    for (const subscription of subscriptions) {
      const answer = await api.replay({ subscription, time });
      expect(answer).toMatchObject({ dryRun: false, seeked: true });
    }
    // Every replayed message is delivered again and acked as a no-op.
    await expectEventually(
      () => {
        for (const subscription of subscriptions) {
          expect(noopsOn(subscription) - (before.get(subscription) ?? 0)).toBeGreaterThanOrEqual(
            expected.get(subscription) ?? 0,
          );
        }
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // Let stragglers land, then: zero side effects.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(
      await Promise.all(runs.map(async (r) => (await stack.backends.store.get(r.runId))?.version)),
    ).toEqual(versions);
    expect(filesUnder(stack.dataDir)).toHaveLength(files);
    expect(logs.withEvent('step_claimed')).toHaveLength(claims);
    expect(fake.callCount).toBe(modelCalls);
    expect(advancedOf()).toBe(advanced);

    // A snapshot taken now (nothing unacked): replaying to it redelivers nothing of these runs,
    // and the dry run's lower bound is the snapshot's creation (expireTime - 7 days).
    const events = stepEventsSubscription(prefix);
    const snapshot = `${prefix}-after-runs`;
    const created = (await api.createSnapshot(events, snapshot)) as { replaysFrom?: string };
    expect(Date.parse(created.replaysFrom ?? '')).toBeGreaterThan(startedAt.getTime());
    const dry = await api.replay({ subscription: events, snapshot, dryRun: true });
    expect((dry.runs ?? []).filter((r) => ours.has(r.runId))).toEqual([]);
    const eventsBefore = noopsOn(events);
    expect(await api.replay({ subscription: events, snapshot })).toMatchObject({ seeked: true });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(noopsOn(events)).toBe(eventsBefore);
  }, 120_000);
});
