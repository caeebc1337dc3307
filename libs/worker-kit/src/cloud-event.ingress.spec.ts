import { InMemoryArtifactStore } from '@tda/artifacts';
import type { FlowRun } from '@tda/contracts';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { buildTopology, InMemoryBroker } from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { afterEach, describe, expect, it } from 'vitest';
import type { CloudEventAttributes } from './cloud-event';
import { CloudEventIngress } from './cloud-event.ingress';
import { CLOUD_EVENTS_PATH, cloudEventRoute } from './cloud-event.route';
import { startHealthServer, type HealthServer } from './health.server';
import { StepHarness } from './step-harness';
import {
  CountingArtifactStore,
  CountingFlowRunStore,
  RecordingPublisher,
  TestStepHandler,
} from './testing';

const T0 = Date.parse('2026-01-15T10:00:10.000Z');
const UPDATED = 'google.cloud.firestore.document.v1.updated';
const REPORT_A = 'llm_report:1M:prompt_month_v1';
const REPORT_B = 'llm_report:1w:prompt_week_v1';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A running run whose two LLM_REPORT steps are both executable (deps SUCCEEDED). */
function twoReadyReports(): FlowRun {
  return makeFlowRun({
    steps: {
      'ohlcv_export:1d': makeStep({
        status: 'SUCCEEDED',
        outputs: { gcs_uri: 'gs://tda-artifacts/o.json' },
      }),
      // Inserted out of order on purpose: the pick must not depend on map order.
      [REPORT_B]: makeStep({
        stepType: 'LLM_REPORT',
        timeframe: '1w',
        dependsOn: ['ohlcv_export:1d'],
      }),
      [REPORT_A]: makeStep({
        stepType: 'LLM_REPORT',
        timeframe: '1M',
        dependsOn: ['ohlcv_export:1d'],
      }),
    },
  });
}

async function fixture(run: FlowRun = twoReadyReports()) {
  const clock = (): Date => new Date(T0);
  const store = new CountingFlowRunStore(new InMemoryFlowRunStore({ clock }));
  await store.inner.create(run);
  const artifacts = new CountingArtifactStore(new InMemoryArtifactStore());
  const broker = new InMemoryBroker();
  broker.applyTopology(buildTopology());
  cleanups.push(() => broker.close());
  const publisher = new RecordingPublisher(broker);
  const log = createMemoryLogger();
  const handler = new TestStepHandler('LLM_REPORT');
  const harness = new StepHarness({
    handler,
    store,
    artifacts,
    publisher,
    logger: log.logger,
    clock,
    owner: 'worker-a',
    policy: { timeoutMs: 5_000, handlerRetryBaseDelayMs: 1, infraBaseDelayMs: 1 },
    random: () => 0,
  });
  const ingress = new CloudEventIngress({ harness, store, logger: log.logger, clock });
  const event = (overrides: Partial<CloudEventAttributes> = {}): CloudEventAttributes => ({
    specversion: '1.0',
    id: 'evt-1',
    source: '//firestore.googleapis.com/projects/p/databases/(default)',
    type: UPDATED,
    subject: `documents/flow_runs/${run.runId}`,
    ...overrides,
  });
  const status = async (stepId: string) =>
    (await store.inner.get(run.runId))?.run.steps[stepId]?.status;
  return { run, store, artifacts, log, handler, ingress, event, status };
}

describe('CloudEventIngress (seed 002 ingress)', () => {
  it('executes the lexicographically first executable step, then the next one on the next event', async () => {
    const f = await fixture();
    const first = await f.ingress.handle(f.event());
    expect(first).toMatchObject({
      kind: 'dispatched',
      runId: f.run.runId,
      stepId: REPORT_A,
      outcome: { kind: 'executed', status: 'SUCCEEDED' },
    });
    expect(await f.status(REPORT_A)).toBe('SUCCEEDED');
    expect(await f.status(REPORT_B)).toBe('READY');
    const second = await f.ingress.handle(f.event({ id: 'evt-2' }));
    expect(second).toMatchObject({ kind: 'dispatched', stepId: REPORT_B });
    expect(await f.status(REPORT_B)).toBe('SUCCEEDED');
    expect(f.handler.executions).toBe(2);
    const received = f.log.withEvent('cloud_event_received');
    expect(received[0]).toMatchObject({
      eventType: UPDATED,
      subject: `documents/flow_runs/${f.run.runId}`,
      cloudEventId: 'evt-1',
    });
  });

  it('ignores an invalid subject with reason=invalid_subject and no reads or writes', async () => {
    const f = await fixture();
    for (const subject of [undefined, 'documents/other/x', 'documents/flow_runs/NOT_A_RUN']) {
      const outcome = await f.ingress.handle(
        subject === undefined ? { ...f.event(), subject: undefined } : f.event({ subject }),
      );
      expect(outcome).toEqual({ kind: 'ignored', reason: 'invalid_subject' });
    }
    expect(f.store.gets).toBe(0);
    expect(f.store.updates).toBe(0);
    expect(f.artifacts.puts).toBe(0);
    const ignored = f.log.withEvent('cloud_event_ignored');
    expect(ignored).toHaveLength(3);
    expect(ignored[1]).toMatchObject({
      reason: 'invalid_subject',
      eventType: UPDATED,
      subject: 'documents/other/x',
    });
  });

  it('ignores event types that cannot make a step executable', async () => {
    const f = await fixture();
    const outcome = await f.ingress.handle(
      f.event({ type: 'google.cloud.firestore.document.v1.deleted' }),
    );
    expect(outcome).toEqual({ kind: 'ignored', reason: 'unsupported_event_type' });
    expect(f.store.gets).toBe(0);
  });

  it('is a no-op without writes when the run is missing or nothing is executable (scenario A)', async () => {
    const waiting = makeFlowRun(); // the default report step is PENDING behind a READY export
    const f = await fixture(waiting);
    expect(await f.ingress.handle(f.event())).toEqual({
      kind: 'noop',
      reason: 'no_executable_step',
      runId: waiting.runId,
    });
    const missing = '20260115-100000_BTC-USDT_zzz99';
    expect(await f.ingress.handle(f.event({ subject: `documents/flow_runs/${missing}` }))).toEqual({
      kind: 'noop',
      reason: 'run_not_found',
      runId: missing,
    });
    expect(f.store.updates).toBe(0);
    expect(f.handler.executions).toBe(0);
    expect(f.log.withEvent('cloud_event_noop').map((r) => r['reason'])).toEqual([
      'no_executable_step',
      'run_not_found',
    ]);
  });

  it('lets duplicated concurrent events execute a step once', async () => {
    const f = await fixture();
    const outcomes = await Promise.all([
      f.ingress.handle(f.event()),
      f.ingress.handle(f.event()),
      f.ingress.handle(f.event()),
    ]);
    const executed = outcomes.filter(
      (o) => o.kind === 'dispatched' && o.outcome.kind === 'executed',
    );
    // All three may pick REPORT_A; the harness lets one claim it. Whatever each picked, no step
    // is executed twice.
    expect(executed.length).toBeGreaterThanOrEqual(1);
    expect(f.handler.executions).toBe(executed.length);
    expect(f.store.statusWrites(REPORT_A).filter((s) => s === 'RUNNING')).toHaveLength(1);
    expect(f.store.statusWrites(REPORT_B).filter((s) => s === 'RUNNING').length).toBeLessThan(2);
  });
});

describe('POST /cloudevents', () => {
  async function serve(f: Awaited<ReturnType<typeof fixture>>): Promise<HealthServer> {
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      routes: [cloudEventRoute(f.ingress, f.log.logger)],
    });
    cleanups.push(() => server.close());
    return server;
  }

  const post = (server: HealthServer, headers: Record<string, string>, body = '') =>
    fetch(`http://127.0.0.1:${server.port}${CLOUD_EVENTS_PATH}`, {
      method: 'POST',
      headers,
      body,
    });

  it('runs a binary-mode Eventarc event and answers 200 with the decision', async () => {
    const f = await fixture();
    const server = await serve(f);
    const response = await post(
      server,
      {
        'ce-specversion': '1.0',
        'ce-id': 'evt-9',
        'ce-source': '//firestore.googleapis.com/projects/p/databases/(default)',
        'ce-type': UPDATED,
        'ce-subject': `documents/flow_runs/${f.run.runId}`,
        'content-type': 'application/protobuf',
      },
      'opaque protobuf document',
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      kind: 'dispatched',
      stepId: REPORT_A,
      harness: { kind: 'executed', status: 'SUCCEEDED' },
    });
    expect(await f.status(REPORT_A)).toBe('SUCCEEDED');
  });

  it('answers 200 for an ignored event, 400 for a non-CloudEvent, 405/413 at the edge', async () => {
    const f = await fixture();
    const server = await serve(f);
    const ignored = await post(server, {
      'ce-specversion': '1.0',
      'ce-id': 'e',
      'ce-source': 's',
      'ce-type': UPDATED,
      'ce-subject': 'documents/flow_runs/bad',
    });
    expect(ignored.status).toBe(200);
    expect(await ignored.json()).toEqual({ kind: 'ignored', reason: 'invalid_subject' });

    const invalid = await post(server, { 'content-type': 'application/json' }, '{}');
    expect(invalid.status).toBe(400);
    const body = (await invalid.json()) as { code: string; message: string; details: unknown };
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.message).toMatch(/not a CloudEvent: specversion/);
    expect(body.details).toMatchObject({ issues: [{ path: 'specversion' }, {}, {}, {}] });

    const get = await fetch(`http://127.0.0.1:${server.port}${CLOUD_EVENTS_PATH}`);
    expect(get.status).toBe(405);
    const huge = await post(server, { 'ce-id': 'x' }, 'x'.repeat(5 * 1024 * 1024));
    expect(huge.status).toBe(413);
    expect(f.store.updates).toBe(0);
  });

  it('answers 500 when the run cannot be read, so Eventarc retries', async () => {
    const f = await fixture();
    const server = await serve(f);
    f.store.failNextGets(1);
    const response = await post(server, {
      'ce-specversion': '1.0',
      'ce-id': 'e',
      'ce-source': 's',
      'ce-type': UPDATED,
      'ce-subject': `documents/flow_runs/${f.run.runId}`,
    });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: 'INTERNAL_ERROR' });
    expect(f.log.withEvent('http_request_failed')).toHaveLength(1);
    expect(await f.status(REPORT_A)).toBe('READY');
  });
});
