import { OidcTestIssuer } from '@tda/service-runtime/testing';
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackends, type Backends } from '@tda/backends';
import { makeFlowRun } from '@tda/flow-store/testing';
import { MESSAGE_TYPES, stepReadySubscription } from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { emulatorEndpoints } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodePushEnvelope } from './pubsub-push.envelope';
import { PUBSUB_PUSH_PATH } from './pubsub-push.route';
import { StepError } from './step-errors';
import {
  CountingFlowRunStore,
  jsonResult,
  TestStepHandler,
  testWorker,
  type TestExecute,
} from './testing';
import { bootstrapWorker, type WorkerServiceHandle } from './worker-service';

const STEP = 'ohlcv_export:1d';

/**
 * Pub/Sub push ingress on the Firestore and Pub/Sub emulators: a worker booted with
 * TDA_INGRESS=push (emulators backend) receives push envelopes signed like Pub/Sub's OIDC tokens
 * (a local RSA key stands in for Google's) on POST /pubsub/push and runs the harness against the
 * real Firestore emulator.
 */
describe('Pub/Sub push ingress (emulators)', () => {
  const issuer = new OidcTestIssuer({
    audience: 'tda-worker-ohlcv-export',
    serviceAccountEmail: 'tda-pubsub-push@tda-local.iam.gserviceaccount.com',
  });
  const log = createMemoryLogger();
  const handler = new TestStepHandler('OHLCV_EXPORT');
  const succeed: TestExecute = async (context) => jsonResult(context);
  const subscribe = vi.fn();
  const prefix = `tpu${Date.now().toString(36)}`;
  let handle: WorkerServiceHandle;
  let store: CountingFlowRunStore;
  let dataDir: string;
  let messages = 0;

  beforeAll(async () => {
    const { firestoreHost, pubsubHost, projectId } = emulatorEndpoints();
    dataDir = await mkdtemp(join(tmpdir(), 'tda-push-'));
    const env = {
      TDA_BACKEND: 'emulators',
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: firestoreHost,
      PUBSUB_EMULATOR_HOST: pubsubHost,
      TDA_DATA_DIR: dataDir,
      TDA_PUBSUB_PREFIX: prefix,
      PORT: '0',
      TDA_INGRESS: 'push',
      TDA_PUSH_AUDIENCE: issuer.audience,
      TDA_PUSH_SERVICE_ACCOUNT: issuer.serviceAccountEmail,
    };
    handle = await bootstrapWorker(testWorker(handler), {
      env,
      logger: log.logger,
      drainTimeoutMs: 2_000,
      pushVerifier: issuer.verifier(),
      createBackends: async (c): Promise<Backends> => {
        const backends = await createBackends(c);
        store = new CountingFlowRunStore(backends.store);
        subscribe.mockImplementation(backends.broker.subscribe.bind(backends.broker));
        backends.broker.subscribe = subscribe;
        return { ...backends, store };
      },
    });
  }, 60_000);

  afterAll(async () => {
    await handle.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** A run with the OHLCV step READY, in the emulator (a distinct runId per call). */
  async function seedRun() {
    const suffix = `p${Math.random().toString(36).slice(2, 7).padEnd(5, '0')}`;
    const run = makeFlowRun({ suffix });
    const created = await store.inner.create(run);
    return { run, version: created.version };
  }

  function envelope(runId: string, overrides: Record<string, unknown> = {}) {
    messages += 1;
    return encodePushEnvelope({
      subscription: `projects/tda-local/subscriptions/${stepReadySubscription('OHLCV_EXPORT', prefix)}`,
      messageId: `int-${messages}`,
      data: {
        runId,
        stepId: STEP,
        stepType: 'OHLCV_EXPORT',
        attempt: 0,
        dispatchedAt: new Date().toISOString(),
        ...overrides,
      },
      attributes: { messageType: MESSAGE_TYPES.stepReady, runId, stepId: STEP },
    });
  }

  const post = (body: unknown, authorization: string | null = issuer.authorization()) =>
    fetch(`http://127.0.0.1:${handle.health.port}${PUBSUB_PUSH_PATH}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization === null ? {} : { authorization }),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  const stepOf = async (runId: string) => (await store.inner.get(runId))?.run.steps[STEP];

  it('opens no streaming pull: the transport consumes the push route only', () => {
    expect(subscribe).not.toHaveBeenCalled();
    expect(log.withEvent('service_started')[0]).toMatchObject({ ingress: ['pubsub-push'] });
  });

  it('a valid push executes the step (200, SUCCEEDED); the same envelope again is an idempotent no-op', async () => {
    handler.executeImpl = succeed;
    const { run } = await seedRun();
    const body = envelope(run.runId);
    const executionsBefore = handler.executions;

    const response = await post(body);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ outcome: { kind: 'executed' } });
    const step = await stepOf(run.runId);
    expect(step?.status).toBe('SUCCEEDED');
    const uri = `gs://tda-artifacts/runs/${run.runId}/1d/${STEP}.json`;
    expect(step?.outputs['gcs_uri']).toBe(uri);
    expect(await handle.backends.artifacts.exists(uri)).toBe(true);
    expect(handler.executions - executionsBefore).toBe(1);

    const before = await store.inner.get(run.runId);
    const again = await post(body);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ outcome: { kind: 'noop' } });
    expect((await store.inner.get(run.runId))?.version).toBe(before?.version);
    expect(handler.executions - executionsBefore).toBe(1);
  });

  it.each<[string, () => string | null]>([
    ['a missing token', () => null],
    [
      'a token for another audience',
      () => issuer.authorization({ aud: 'tda-worker-chart-export' }),
    ],
    ['a forged token', () => `Bearer ${issuer.token({}, { signWith: new OidcTestIssuer() })}`],
  ])('%s: 401, nothing read, nothing changed', async (_name, authorization) => {
    const { run, version } = await seedRun();
    store.resetCounts();
    const response = await post(envelope(run.runId), authorization());
    expect(response.status).toBe(401);
    expect({ gets: store.gets, updates: store.updates }).toEqual({ gets: 0, updates: 0 });
    const stored = await store.inner.get(run.runId);
    expect(stored?.version).toBe(version);
    expect(stored?.run.steps[STEP]?.status).toBe('READY');
  });

  it.each<[string, (runId: string) => unknown]>([
    ['an envelope without message', () => ({ subscription: 'projects/p/subscriptions/s' })],
    ['a contract-invalid step-ready body', (runId) => envelope(runId, { attempt: 'zero' })],
  ])('%s: 400, nothing read, nothing changed', async (_name, build) => {
    const { run, version } = await seedRun();
    store.resetCounts();
    const response = await post(build(run.runId));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'INVALID_REQUEST' });
    expect({ gets: store.gets, updates: store.updates }).toEqual({ gets: 0, updates: 0 });
    expect((await store.inner.get(run.runId))?.version).toBe(version);
  });

  it('a delivery the pull transport would nack (store unavailable) answers 500 and changes nothing; the redelivery succeeds', async () => {
    handler.executeImpl = succeed;
    const { run, version } = await seedRun();
    const body = envelope(run.runId);
    store.failNextGets(1);
    const failed = await post(body);
    expect(failed.status).toBe(500);
    expect((await store.inner.get(run.runId))?.version).toBe(version);

    const redelivered = await post(body);
    expect(redelivered.status).toBe(200);
    expect((await stepOf(run.runId))?.status).toBe('SUCCEEDED');
  });

  it('a failing handler is a decided FAILED step: 200 (acked, not redelivered)', async () => {
    handler.executeImpl = () =>
      Promise.reject(
        new StepError('MARKET_DATA_UNAVAILABLE', 'exchange down', {
          details: {},
          retryable: false,
        }),
      );
    const { run } = await seedRun();
    const response = await post(envelope(run.runId));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      outcome: { kind: 'failed', status: 'FAILED', errorCode: 'MARKET_DATA_UNAVAILABLE' },
    });
    expect((await stepOf(run.runId))?.error).toMatchObject({ code: 'MARKET_DATA_UNAVAILABLE' });
  });
});
