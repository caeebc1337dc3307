import type { ApiError, FlowRun, StepStatus, StepType } from '@tda/contracts';
import { validate } from '@tda/contracts';
import { stepEventsSubscription, stepReadySubscription, type InMemoryBroker } from '@tda/messaging';
import { expectEventually } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  collectStepReady,
  makeTestBroker,
  publishStepEvent,
  simulateWorker,
  startTestOrchestrator,
  type HttpResult,
  type ReceivedStepReady,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

/**
 * Recovery operations through the real Nest app (in-memory store and broker): retry of a FAILED
 * step, rerun from a step into a new run, replay dry runs and seeks, snapshots, and their errors.
 * Workers are simulated with the real flow-engine claim/finalize decisions.
 */

const OHLCV_1M = 'ohlcv_export:1M';
const OHLCV_1W = 'ohlcv_export:1w';
const CHARTS_1M = 'charts:1M:ctpl_default_v1';
const CHARTS_1W = 'charts:1w:ctpl_default_v1';
const STEP_TYPES: StepType[] = ['OHLCV_EXPORT', 'CHART_EXPORT'];
const CHART_SUB = stepReadySubscription('CHART_EXPORT');
const EVENTS_SUB = stepEventsSubscription();

let orc: TestOrchestrator;
let broker: InMemoryBroker;
let stepReady: { received: ReceivedStepReady[]; close(): Promise<void> };

beforeEach(async () => {
  broker = makeTestBroker();
  orc = await startTestOrchestrator({ broker });
  stepReady = await collectStepReady(broker, STEP_TYPES);
});

afterEach(async () => {
  await stepReady.close();
  await orc.close();
});

async function getRun(runId: string): Promise<FlowRun> {
  const res = await orc.request('GET', `/runs/${runId}`);
  expect(res.status).toBe(200);
  return res.body as FlowRun;
}

async function trigger(symbol = 'BTC-USDT'): Promise<FlowRun> {
  const res = await orc.request('POST', '/runs', {
    body: { flowKey: 'market_charts_v1', scope: { symbol } },
  });
  expect(res.status).toBe(201);
  return res.body as FlowRun;
}

/** A worker finishing one step: claim + finalize, the step event, then the orchestrator's advance. */
async function finish(
  run: FlowRun,
  stepId: string,
  status: 'SUCCEEDED' | 'FAILED' = 'SUCCEEDED',
  settled: (run: FlowRun) => boolean = () => true,
): Promise<FlowRun> {
  const attempt = await simulateWorker(orc.store, run.runId, stepId, orc.clock.now, { status });
  const stepType = run.steps[stepId]?.stepType;
  if (stepType === undefined) throw new Error(`no step ${stepId}`);
  await publishStepEvent(orc.broker, {
    runId: run.runId,
    stepId,
    stepType,
    status,
    attempt,
    at: orc.clock.now().toISOString(),
  });
  return expectEventually(async () => {
    const current = await getRun(run.runId);
    expect(settled(current)).toBe(true);
    return current;
  });
}

const statuses = (run: FlowRun): Record<string, StepStatus> =>
  Object.fromEntries(Object.entries(run.steps).map(([id, s]) => [id, s.status]));

/** OHLCV 1M succeeds (charts 1M READY), then OHLCV 1w fails: the run FAILS. */
async function failedRun(symbol = 'BTC-USDT'): Promise<FlowRun> {
  const run = await trigger(symbol);
  await finish(run, OHLCV_1M, 'SUCCEEDED', (r) => r.steps[CHARTS_1M]?.status === 'READY');
  return finish(run, OHLCV_1W, 'FAILED', (r) => r.status === 'FAILED');
}

async function succeededRun(symbol = 'ETH-USDT'): Promise<FlowRun> {
  const run = await trigger(symbol);
  await finish(run, OHLCV_1M, 'SUCCEEDED', (r) => r.steps[CHARTS_1M]?.status === 'READY');
  await finish(run, OHLCV_1W, 'SUCCEEDED', (r) => r.steps[CHARTS_1W]?.status === 'READY');
  await finish(run, CHARTS_1M);
  return finish(run, CHARTS_1W, 'SUCCEEDED', (r) => r.status === 'SUCCEEDED');
}

function readyFor(runId: string): ReceivedStepReady[] {
  return stepReady.received.filter((r) => r.body.runId === runId);
}

function apiError(body: unknown): ApiError {
  const checked = validate.apiError(body);
  expect(checked.ok ? [] : checked.issues).toEqual([]);
  return body as ApiError;
}

describe('POST /runs/{runId}/steps/{stepId}/retry', () => {
  it('re-opens the FAILED step and the steps its failure cancelled, restarts the run and dispatches; the run then SUCCEEDS', async () => {
    const failed = await failedRun();
    expect(statuses(failed)).toEqual({
      [OHLCV_1M]: 'SUCCEEDED',
      [OHLCV_1W]: 'FAILED',
      [CHARTS_1M]: 'CANCELLED',
      [CHARTS_1W]: 'CANCELLED',
    });

    const res = await orc.request('POST', `/runs/${failed.runId}/steps/${OHLCV_1W}/retry`);
    expect(res.status).toBe(200);
    const retried = res.body as FlowRun;
    expect(validate.flowRun(retried).ok).toBe(true);
    expect(retried.status).toBe('RUNNING');
    expect(retried.error).toBeUndefined();
    expect(retried.finishedAt).toBeUndefined();
    expect(statuses(retried)).toEqual({
      [OHLCV_1M]: 'SUCCEEDED',
      [OHLCV_1W]: 'READY',
      [CHARTS_1M]: 'READY',
      [CHARTS_1W]: 'PENDING',
    });
    expect(retried.steps[OHLCV_1W]).toMatchObject({ attempt: 0, outputs: {} });
    expect(retried.steps[OHLCV_1W]?.['retryHistory']).toEqual([
      expect.objectContaining({
        status: 'FAILED',
        attempt: 1,
        error: expect.objectContaining({ code: 'MARKET_DATA_UNAVAILABLE' }),
      }),
    ]);
    expect(retried['retryHistory']).toEqual([
      expect.objectContaining({ stepIds: [OHLCV_1W], reopened: [CHARTS_1M, CHARTS_1W] }),
    ]);
    await expectEventually(() => {
      const retries = readyFor(failed.runId).filter((r) => r.body.reason === 'retry');
      expect(retries.map((r) => r.body.stepId).sort()).toEqual([CHARTS_1M, OHLCV_1W]);
    });
    expect(orc.logs.withEvent('run_retried')).toEqual([
      expect.objectContaining({ runId: failed.runId, retried: [OHLCV_1W] }),
    ]);

    await finish(retried, OHLCV_1W, 'SUCCEEDED', (r) => r.steps[CHARTS_1W]?.status === 'READY');
    await finish(retried, CHARTS_1M);
    const done = await finish(retried, CHARTS_1W, 'SUCCEEDED', (r) => r.status === 'SUCCEEDED');
    expect(done.progress).toMatchObject({ total: 4, succeeded: 4 });
  });

  it('is idempotent under a concurrent double click: one retry, one dispatch, both answer 200', async () => {
    const failed = await failedRun();
    const [a, b] = await Promise.all([
      orc.request('POST', `/runs/${failed.runId}/steps/${OHLCV_1W}/retry`),
      orc.request('POST', `/runs/${failed.runId}/steps/${OHLCV_1W}/retry`),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const run = await getRun(failed.runId);
    expect(run['retryHistory']).toHaveLength(1);
    expect(run.steps[OHLCV_1W]?.['retryHistory']).toHaveLength(1);
    expect(orc.logs.withEvent('run_retried')).toHaveLength(1);
    await expectEventually(() => {
      const retries = readyFor(failed.runId).filter((r) => r.body.reason === 'retry');
      expect(retries).toHaveLength(2); // OHLCV 1w and charts 1M, once each
    });
    // A later click while the retried run goes on is answered the same way.
    const again = await orc.request('POST', `/runs/${failed.runId}/steps/${OHLCV_1W}/retry`);
    expect(again.status).toBe(200);
    expect((again.body as FlowRun).status).toBe('RUNNING');
  });

  it('POST /runs/{runId}/retry retries every FAILED step', async () => {
    const failed = await failedRun();
    const res = await orc.request('POST', `/runs/${failed.runId}/retry`);
    expect(res.status).toBe(200);
    expect(statuses(res.body as FlowRun)[OHLCV_1W]).toBe('READY');
  });

  it('answers 409 for a step that is not FAILED, a run that was cancelled or has nothing failed; 404 / 400 otherwise', async () => {
    const failed = await failedRun();
    const notFailed = await orc.request('POST', `/runs/${failed.runId}/steps/${OHLCV_1M}/retry`);
    expect(notFailed.status).toBe(409);
    expect(apiError(notFailed.body)).toMatchObject({
      code: 'CONFLICT',
      details: { reason: 'step_not_failed', stepStatus: 'SUCCEEDED', failedStepIds: [OHLCV_1W] },
    });

    const running = await trigger('SOL-USDT');
    const cancel = await orc.request('POST', `/runs/${running.runId}/cancel`);
    expect(cancel.status).toBe(200);
    const cancelled = await orc.request('POST', `/runs/${running.runId}/steps/${OHLCV_1M}/retry`);
    expect(cancelled.status).toBe(409);
    expect(apiError(cancelled.body).details).toMatchObject({ reason: 'run_cancelled' });
    const cancelledRun = await orc.request('POST', `/runs/${running.runId}/retry`);
    expect(cancelledRun.status).toBe(409);
    expect((await getRun(running.runId)).status).toBe('CANCELLED');

    const noFailures = await orc.request(
      'POST',
      `/runs/${(await trigger('ADA-USDT')).runId}/retry`,
    );
    expect(noFailures.status).toBe(409);
    expect(apiError(noFailures.body).details).toMatchObject({ reason: 'no_failed_steps' });

    const unknownStep = await orc.request('POST', `/runs/${failed.runId}/steps/nope:1w/retry`);
    expect(unknownStep.status).toBe(404);
    expect(apiError(unknownStep.body).code).toBe('NOT_FOUND');
    const unknownRun = await orc.request(
      'POST',
      `/runs/20250115-100000_BTC-USDT_zzzzz/steps/${OHLCV_1W}/retry`,
    );
    expect(unknownRun.status).toBe(404);
    const badStep = await orc.request('POST', `/runs/${failed.runId}/steps/a%20b/retry`);
    expect(badStep.status).toBe(400);
    const noToken = await orc.request('POST', `/runs/${failed.runId}/retry`, { token: null });
    expect(noToken.status).toBe(401);
    // None of this changed the failed run.
    expect((await getRun(failed.runId)).status).toBe('FAILED');
  });
});

describe('POST /runs/{runId}/rerun', () => {
  it('creates a new run that reuses every step outside the rerun (same gcs_uri, reusedFrom) and dispatches only the rerun step', async () => {
    const source = await succeededRun();
    const before = readyFor(source.runId).length;
    const res = await orc.request('POST', `/runs/${source.runId}/rerun`, {
      body: { fromStepId: CHARTS_1W },
    });
    expect(res.status).toBe(201);
    const rerun = res.body as FlowRun;
    expect(res.headers.get('location')).toBe(`/runs/${rerun.runId}`);
    expect(rerun.runId).not.toBe(source.runId);
    expect(validate.flowRun(rerun).ok).toBe(true);
    expect(rerun).toMatchObject({
      flowKey: source.flowKey,
      scope: source.scope,
      ownerId: source.ownerId,
      status: 'RUNNING',
      trigger: { type: 'SYSTEM', rerunOf: { runId: source.runId, fromStepId: CHARTS_1W } },
    });
    expect(statuses(rerun)).toEqual({
      [OHLCV_1M]: 'SUCCEEDED',
      [OHLCV_1W]: 'SUCCEEDED',
      [CHARTS_1M]: 'SUCCEEDED',
      [CHARTS_1W]: 'READY',
    });
    for (const stepId of [OHLCV_1M, OHLCV_1W, CHARTS_1M]) {
      expect(rerun.steps[stepId]?.outputs.gcs_uri).toBe(source.steps[stepId]?.outputs.gcs_uri);
      expect(rerun.steps[stepId]?.outputs.execution?.['reusedFrom']).toEqual({
        runId: source.runId,
        stepId,
        sourceRunId: source.runId,
      });
      expect(rerun.steps[stepId]?.attempt).toBe(0);
    }
    await expectEventually(() =>
      expect(readyFor(rerun.runId).map((r) => r.body.stepId)).toEqual([CHARTS_1W]),
    );
    // The source is untouched.
    expect(readyFor(source.runId)).toHaveLength(before);
    expect(await getRun(source.runId)).toEqual(source);

    const done = await finish(rerun, CHARTS_1W, 'SUCCEEDED', (r) => r.status === 'SUCCEEDED');
    expect(done.steps[CHARTS_1W]?.outputs.gcs_uri).toContain(rerun.runId);
  });

  it('refuses a rerun whose reused steps did not succeed (409), an unknown step (404), a bad body (400)', async () => {
    const failed = await failedRun();
    const blocked = await orc.request('POST', `/runs/${failed.runId}/rerun`, {
      body: { fromStepId: CHARTS_1M },
    });
    expect(blocked.status).toBe(409);
    expect(apiError(blocked.body).details).toMatchObject({
      reason: 'upstream_not_succeeded',
      steps: [
        { stepId: CHARTS_1W, status: 'CANCELLED' },
        { stepId: OHLCV_1W, status: 'FAILED' },
      ],
    });
    // Fail-fast cancelled charts 1M, outside the rerun from OHLCV 1w: nothing to reuse there
    // either (retry is the operation for a FAILED run).
    const fromFailed = await orc.request('POST', `/runs/${failed.runId}/rerun`, {
      body: { fromStepId: OHLCV_1W },
    });
    expect(fromFailed.status).toBe(409);
    expect(apiError(fromFailed.body).details).toMatchObject({
      steps: [{ stepId: CHARTS_1M, status: 'CANCELLED' }],
    });

    const unknown = await orc.request('POST', `/runs/${failed.runId}/rerun`, {
      body: { fromStepId: 'charts:1d:x' },
    });
    expect(unknown.status).toBe(404);
    for (const body of [{}, { fromStepId: 'a b' }, { fromStepId: OHLCV_1W, extra: 1 }, []]) {
      const bad = await orc.request('POST', `/runs/${failed.runId}/rerun`, { body });
      expect(bad.status).toBe(400);
      expect(apiError(bad.body).code).toBe('INVALID_REQUEST');
    }
    const missing = await orc.request('POST', '/runs/20250115-100000_BTC-USDT_zzzzz/rerun', {
      body: { fromStepId: OHLCV_1W },
    });
    expect(missing.status).toBe(404);
  });
});

describe('step ids named like Object.prototype members', () => {
  // A stepId from a request is a key of `run.steps`; an inherited member must never pass for a
  // step (the artifact route used to answer 500 for these).
  const INHERITED = ['constructor', 'toString', 'hasOwnProperty', 'valueOf'];

  /** The four routes that look a request's stepId up in a run (rerun: body `fromStepId`). */
  async function stepRoutes(runId: string, stepId: string): Promise<Array<[string, HttpResult]>> {
    const base = `/runs/${runId}`;
    return [
      ['artifact', await orc.request('GET', `${base}/steps/${stepId}/artifact`)],
      ['blocked-on', await orc.request('GET', `${base}/steps/${stepId}/blocked-on`)],
      ['retry', await orc.request('POST', `${base}/steps/${stepId}/retry`)],
      ['rerun', await orc.request('POST', `${base}/rerun`, { body: { fromStepId: stepId } })],
    ];
  }

  it('every step route answers 404 NOT_FOUND with the standard body and changes nothing', async () => {
    const failed = await failedRun();
    for (const stepId of INHERITED) {
      for (const [route, res] of await stepRoutes(failed.runId, stepId)) {
        expect({ route, stepId, status: res.status }).toEqual({ route, stepId, status: 404 });
        expect(apiError(res.body)).toMatchObject({
          code: 'NOT_FOUND',
          retryable: false,
          details: { runId: failed.runId, stepId },
          requestId: expect.any(String),
        });
      }
    }
    // `__proto__` is not a stepId at all (a stepId starts with a letter or digit): 400, as for
    // any malformed id, before any lookup.
    for (const [route, res] of await stepRoutes(failed.runId, '__proto__')) {
      expect({ route, status: res.status }).toEqual({ route, status: 400 });
      expect(apiError(res.body).code).toBe('INVALID_REQUEST');
    }
    expect(await getRun(failed.runId)).toEqual(failed);
  });
});

describe('POST /admin/replay and /admin/snapshots', () => {
  const past = (): string => new Date(orc.clock.now().getTime() - 3_600_000).toISOString();

  it('dry run lists the steps that would get a message with the worker decision, and seeks nothing', async () => {
    const done = await succeededRun();
    const received = stepReady.received.length;
    const res = await orc.request('POST', '/admin/replay', {
      body: { subscription: CHART_SUB, time: past(), dryRun: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      subscription: CHART_SUB,
      kind: 'step_ready',
      stepType: 'CHART_EXPORT',
      dryRun: true,
      seeked: false,
      source: 'run_documents',
      counts: { noop: 2 },
    });
    const steps = (res.body as { steps: { runId: string; stepId: string; summary: string }[] })
      .steps;
    expect(steps.map((s) => [s.runId, s.stepId, s.summary])).toEqual([
      [done.runId, CHARTS_1M, 'noop: the run is SUCCEEDED'],
      [done.runId, CHARTS_1W, 'noop: the run is SUCCEEDED'],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stepReady.received).toHaveLength(received);

    const events = await orc.request('POST', '/admin/replay', {
      body: { subscription: EVENTS_SUB, time: past(), dryRun: true },
    });
    expect(events.status).toBe(200);
    expect(events.body).toMatchObject({
      kind: 'step_events',
      counts: { noop: 1 },
      runs: [
        {
          runId: done.runId,
          decision: 'noop',
          wouldRepublish: [],
          summary: 'noop: the run is SUCCEEDED, advancing it writes nothing',
        },
      ],
    });
  });

  it('a real replay of step-ready and step-events over a finished run redelivers but changes nothing', async () => {
    const done = await succeededRun();
    const version = (await orc.store.get(done.runId))?.version;
    const delivered = readyFor(done.runId).length;
    const ready = await orc.request('POST', '/admin/replay', {
      body: { subscription: CHART_SUB, time: past() },
    });
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ dryRun: false, seeked: true, counts: { noop: 2 } });
    // The retained CHART_EXPORT messages come again (to our stand-in worker).
    await expectEventually(() =>
      expect(
        readyFor(done.runId).filter((r) => r.body.stepType === 'CHART_EXPORT').length,
      ).toBeGreaterThanOrEqual(4),
    );
    expect(readyFor(done.runId).length).toBeGreaterThan(delivered);

    const events = await orc.request('POST', '/admin/replay', {
      body: { subscription: EVENTS_SUB, time: past() },
    });
    expect(events.body).toMatchObject({ seeked: true });
    // The orchestrator consumes the four replayed events again: every advance is a no-op.
    await expectEventually(() => {
      const acked = orc.logs
        .withEvent('message_acked')
        .filter((r) => r['runId'] === done.runId && r['subscription'] === EVENTS_SUB);
      expect(acked.length).toBeGreaterThanOrEqual(8);
    });
    expect((await orc.store.get(done.runId))?.version).toBe(version);
    expect(orc.logs.withEvent('subscription_seeked')).toHaveLength(2);
  });

  it('snapshots: create, replay to one (dry and real), and their errors', async () => {
    const created = await orc.request('POST', '/admin/snapshots', {
      body: { subscription: CHART_SUB, name: 'before-rerun-1' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'before-rerun-1',
      subscription: CHART_SUB,
      topic: 'tda-step-ready-chart-export',
      replaysFrom: expect.any(String),
    });
    const dup = await orc.request('POST', '/admin/snapshots', {
      body: { subscription: CHART_SUB, name: 'before-rerun-1' },
    });
    expect(dup.status).toBe(409);
    expect(apiError(dup.body).code).toBe('CONFLICT');
    const badName = await orc.request('POST', '/admin/snapshots', {
      body: { subscription: CHART_SUB, name: 'x' },
    });
    expect(badName.status).toBe(400);

    const dry = await orc.request('POST', '/admin/replay', {
      body: { subscription: CHART_SUB, snapshot: 'before-rerun-1', dryRun: true },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ target: { snapshot: 'before-rerun-1' }, seeked: false });
    const real = await orc.request('POST', '/admin/replay', {
      body: { subscription: CHART_SUB, snapshot: 'before-rerun-1' },
    });
    expect(real.body).toMatchObject({ seeked: true });

    const missing = await orc.request('POST', '/admin/replay', {
      body: { subscription: CHART_SUB, snapshot: 'no-such-snapshot' },
    });
    expect(missing.status).toBe(404);
    const otherTopic = await orc.request('POST', '/admin/replay', {
      body: { subscription: EVENTS_SUB, snapshot: 'before-rerun-1' },
    });
    expect(otherTopic.status).toBe(400);
    expect(apiError(otherTopic.body).details).toMatchObject({ field: 'snapshot' });
  });

  it('rejects bad replay requests with 400 {code, message, details} and seeks nothing', async () => {
    const future = new Date(orc.clock.now().getTime() + 60_000).toISOString();
    const cases: [unknown, Record<string, unknown>][] = [
      [{ subscription: 'tda-dead-letter-sub', time: past() }, { field: 'subscription' }],
      [{ subscription: 'nope', time: past() }, { field: 'subscription' }],
      [{ subscription: CHART_SUB }, { fields: ['time', 'snapshot'], given: [] }],
      [
        { subscription: CHART_SUB, time: past(), snapshot: 'snap-abc' },
        { given: ['time', 'snapshot'] },
      ],
      [{ subscription: CHART_SUB, time: future }, { field: 'time' }],
      [{ subscription: CHART_SUB, time: 'yesterday' }, { field: 'time' }],
      [{ subscription: CHART_SUB, snapshot: 'goog-x1' }, { field: 'snapshot' }],
      [{ subscription: CHART_SUB, time: past(), dryRun: 'yes' }, { field: 'dryRun' }],
      [{ subscription: CHART_SUB, time: past(), force: true }, { unknownFields: ['force'] }],
    ];
    for (const [body, details] of cases) {
      const res = await orc.request('POST', '/admin/replay', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(apiError(res.body)).toMatchObject({ code: 'INVALID_REQUEST', details });
    }
    const allowed = (
      apiError(
        (
          await orc.request('POST', '/admin/replay', {
            body: { subscription: 'nope', time: past() },
          })
        ).body,
      ).details as { allowed: string[] }
    ).allowed;
    expect(allowed).toContain(CHART_SUB);
    expect(allowed).toContain(EVENTS_SUB);
    expect(orc.logs.withEvent('subscription_seeked')).toEqual([]);
    expect((await orc.request('POST', '/admin/replay', { body: {}, token: null })).status).toBe(
      401,
    );
  });
});
