import { OidcTestIssuer } from '@tda/service-runtime/testing';
import 'reflect-metadata';
import { createBackends, type Backends } from '@tda/backends';
import { ConfigError, loadConfig, refineGoogleBackend, type EnvSource } from '@tda/config';
import { makeFlowRun } from '@tda/flow-store/testing';
import { MESSAGE_TYPES, stepReadySubscription, type MessageBroker } from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { PUBSUB_PUSH_PATH, pubSubPushRoute } from './pubsub-push.route';
import { encodePushEnvelope } from './pubsub-push.envelope';
import { PushSubscriptionBroker } from './pubsub-push.subscriber';
import { startHealthServer } from '@tda/service-runtime';
import { StepError } from './step-errors';
import {
  CountingFlowRunStore,
  jsonResult,
  memoryWorkerEnv,
  TestStepHandler,
  testWorker,
} from './testing';
import { workerServiceEnv } from './worker-env';
import { refineWorkerIngress } from './worker-ingress';
import { bootstrapWorker } from './worker-service';

const SERVICE = 'worker-push-test';
const STEP = 'ohlcv_export:1d';
const schema = z.object(workerServiceEnv).superRefine(refineGoogleBackend);

const issuer = new OidcTestIssuer({
  audience: 'tda-worker-push-test',
  serviceAccountEmail: 'tda-pubsub-push@tda-test.iam.gserviceaccount.com',
});
const PUSH_ENV = {
  TDA_INGRESS: 'push',
  TDA_PUSH_AUDIENCE: issuer.audience,
  TDA_PUSH_SERVICE_ACCOUNT: issuer.serviceAccountEmail,
};
const SUBSCRIPTION = 'projects/tda-local/subscriptions/tda-step-ready-ohlcv-export-sub';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function envFor(env: EnvSource = {}): Promise<EnvSource> {
  const memory = await memoryWorkerEnv();
  cleanups.push(() => memory.cleanup());
  return { ...memory.env, ...env };
}

/** A push worker on memory backends whose store counts every call and whose broker is spied. */
async function bootPush(env: EnvSource = {}, drainTimeoutMs = 500) {
  const log = createMemoryLogger();
  const handler = new TestStepHandler('OHLCV_EXPORT');
  let store: CountingFlowRunStore | undefined;
  let broker: MessageBroker | undefined;
  const subscribe = vi.fn();
  const handle = await bootstrapWorker(testWorker(handler), {
    env: await envFor({ ...PUSH_ENV, ...env }),
    logger: log.logger,
    drainTimeoutMs,
    pushVerifier: issuer.verifier(),
    createBackends: async (c): Promise<Backends> => {
      const backends = await createBackends(c);
      store = new CountingFlowRunStore(backends.store);
      broker = backends.broker;
      const original = backends.broker.subscribe.bind(backends.broker);
      subscribe.mockImplementation(original);
      backends.broker.subscribe = subscribe;
      return { ...backends, store };
    },
  });
  cleanups.push(() => handle.close());
  if (store === undefined || broker === undefined) throw new Error('backends not built');
  const counting = store;
  const url = `http://127.0.0.1:${handle.health.port}${PUBSUB_PUSH_PATH}`;
  let messages = 0;
  const stepReady = (runId: string, overrides: Record<string, unknown> = {}) => ({
    runId,
    stepId: STEP,
    stepType: 'OHLCV_EXPORT',
    attempt: 0,
    dispatchedAt: new Date().toISOString(),
    ...overrides,
  });
  const envelope = (
    data: Buffer | object,
    options: { attributes?: Record<string, string>; deliveryAttempt?: number; id?: string } = {},
  ) => {
    messages += 1;
    return encodePushEnvelope({
      subscription: SUBSCRIPTION,
      messageId: options.id ?? `msg-${messages}`,
      data,
      attributes: options.attributes ?? { messageType: MESSAGE_TYPES.stepReady },
      ...(options.deliveryAttempt === undefined
        ? {}
        : { deliveryAttempt: options.deliveryAttempt }),
    });
  };
  /** `authorization`: null sends none; default a valid push token. */
  const post = (
    body: unknown,
    authorization: string | null = issuer.authorization(),
  ): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization === null ? {} : { authorization }),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const seed = async (suffix: string) => {
    const run = makeFlowRun({ suffix });
    await counting.inner.create(run);
    return run;
  };
  return {
    handle,
    handler,
    store: counting,
    subscribe,
    log,
    url,
    post,
    envelope,
    stepReady,
    seed,
  };
}

describe('POST /pubsub/push (bootstrapWorker, TDA_INGRESS=push)', () => {
  it('opens no pull stream and logs the push ingress', async () => {
    const { subscribe, log, handle } = await bootPush();
    expect(subscribe).not.toHaveBeenCalled();
    expect(log.withEvent('transport_started')[0]).toMatchObject({
      subscriptions: [stepReadySubscription('OHLCV_EXPORT')],
    });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      port: handle.health.port,
      ingress: ['pubsub-push'],
      push: {
        path: '/pubsub/push',
        audience: issuer.audience,
        serviceAccount: issuer.serviceAccountEmail,
      },
    });
  });

  it('executes a pushed step-ready message (200), then answers its redelivery with a no-op (200, no write)', async () => {
    const w = await bootPush();
    const run = await w.seed('push1');
    const body = w.envelope(w.stepReady(run.runId), { id: 'm-1' });

    const first = await w.post(body);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      messageId: 'm-1',
      outcome: { kind: 'executed', status: 'SUCCEEDED' },
    });
    expect((await w.store.inner.get(run.runId))?.run.steps[STEP]?.status).toBe('SUCCEEDED');
    expect(w.store.statusWrites(STEP)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(w.handler.executions).toBe(1);
    // The same transport as pull: one outcome line per delivery, in the message's context.
    expect(w.log.withEvent('message_acked')[0]).toMatchObject({
      messageId: 'm-1',
      deliveryAttempt: 1,
      outcome: 'processed',
      detail: 'executed:SUCCEEDED',
    });

    w.store.resetCounts();
    const again = await w.post(body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({
      messageId: 'm-1',
      outcome: { kind: 'noop', reason: 'not_ready' },
    });
    expect(w.store.writes).toBe(0);
    expect(w.handler.executions).toBe(1);
    // Pub/Sub had no dead-letter count in the envelope: the worker's own count goes on.
    expect(w.log.withEvent('message_acked')[1]).toMatchObject({ deliveryAttempt: 2 });
  });

  it.each<[string, () => string | undefined, string]>([
    ['no token', () => undefined, 'missing_token'],
    [
      'a token for another audience',
      () => issuer.authorization({ aud: 'other' }),
      'wrong_audience',
    ],
    [
      'a token of another account',
      () => issuer.authorization({ email: 'intruder@tda-test.iam.gserviceaccount.com' }),
      'wrong_service_account',
    ],
    ['an expired token', () => issuer.authorization({ iat: 1_000, exp: 4_600 }), 'expired'],
    [
      'a token signed by another key',
      () => `Bearer ${issuer.token({}, { signWith: new OidcTestIssuer() })}`,
      'bad_signature',
    ],
  ])('refuses %s with 401, without touching the store or the handler', async (_n, auth, reason) => {
    const w = await bootPush();
    const run = await w.seed('auth1');
    const authorization = auth();
    const response = await w.post(w.envelope(w.stepReady(run.runId)), authorization ?? null);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await response.json()).toEqual({
      code: 'UNAUTHENTICATED',
      message: 'missing or invalid Pub/Sub push OIDC token',
      details: { reason },
    });
    expect({ gets: w.store.gets, updates: w.store.updates }).toEqual({ gets: 0, updates: 0 });
    expect(w.handler.executions).toBe(0);
    expect(w.log.withEvent('message_received')).toHaveLength(0);
    expect(w.log.withEvent('pubsub_push_unauthenticated')).toEqual([
      expect.objectContaining({ reason }),
    ]);
    // The token never reaches the logs.
    const token = authorization?.split(' ')[1];
    if (token !== undefined) {
      for (const part of token.split('.'))
        expect(JSON.stringify(w.log.records)).not.toContain(part);
    }
  });

  const runId = makeFlowRun({ suffix: 'bad1' }).runId;
  it.each<[string, (w: Awaited<ReturnType<typeof bootPush>>) => unknown, string]>([
    ['a body that is not JSON', () => '{"message":', 'invalid_envelope'],
    [
      'data that is not base64',
      (w) => {
        const body = w.envelope(w.stepReady(runId));
        (body['message'] as Record<string, unknown>)['data'] = '***';
        return body;
      },
      'invalid_envelope',
    ],
    [
      'no messageId',
      (w) => {
        const body = w.envelope(w.stepReady(runId));
        const message = body['message'] as Record<string, unknown>;
        delete message['messageId'];
        delete message['message_id'];
        return body;
      },
      'invalid_envelope',
    ],
    [
      'no messageType attribute',
      (w) => w.envelope(w.stepReady(runId), { attributes: {} }),
      'not_a_step_ready_message',
    ],
    [
      'another messageType',
      (w) => w.envelope(w.stepReady(runId), { attributes: { messageType: 'step_event' } }),
      'not_a_step_ready_message',
    ],
    [
      'data that is not JSON',
      (w) => w.envelope(Buffer.from('not json')),
      'not_a_step_ready_message',
    ],
    [
      'a step-ready body the contract refuses',
      (w) => w.envelope(w.stepReady(runId, { attempt: -1, extra: true })),
      'invalid_message',
    ],
    [
      'a step-ready message of another step type',
      (w) =>
        w.envelope(w.stepReady(runId, { stepType: 'CHART_EXPORT', stepId: 'chart_export:1d' })),
      'no_handler_for_step_type',
    ],
  ])('answers %s with 400 and zero store reads or writes', async (_n, build, reason) => {
    const w = await bootPush();
    await w.seed('bad1');
    const response = await w.post(build(w));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; details: { reason: string } };
    expect(body).toMatchObject({ code: 'INVALID_REQUEST', details: { reason } });
    expect({ gets: w.store.gets, updates: w.store.updates }).toEqual({ gets: 0, updates: 0 });
    expect(w.handler.executions).toBe(0);
    expect(w.log.withEvent('pubsub_push_rejected')).toEqual([
      expect.objectContaining({ status: 400, reason }),
    ]);
    expect((await w.store.inner.get(runId))?.run.steps[STEP]?.status).toBe('READY');
  });

  it('answers what the pull transport would nack with 500; the redelivery then executes', async () => {
    const w = await bootPush();
    const run = await w.seed('nack1');
    const body = w.envelope(w.stepReady(run.runId), { id: 'm-nack' });
    w.store.failNextGets(1);
    const failed = await w.post(body);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({
      code: 'INTERNAL_ERROR',
      details: { messageId: 'm-nack' },
    });
    expect(w.store.writes).toBe(0);
    expect(w.log.withEvent('message_handler_failed')[0]).toMatchObject({ action: 'nack' });

    const retried = await w.post(body);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ outcome: { kind: 'executed' } });
  });

  it('acks a step the handler failed (decided: 200, FAILED), like the pull transport', async () => {
    const w = await bootPush();
    w.handler.executeImpl = () =>
      Promise.reject(
        new StepError('MARKET_DATA_UNAVAILABLE', 'no candles', { details: {}, retryable: false }),
      );
    const run = await w.seed('fail1');
    const response = await w.post(w.envelope(w.stepReady(run.runId)));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      outcome: { kind: 'failed', status: 'FAILED', errorCode: 'MARKET_DATA_UNAVAILABLE' },
    });
    expect((await w.store.inner.get(run.runId))?.run.steps[STEP]?.status).toBe('FAILED');
  });

  it("passes Pub/Sub's deliveryAttempt to the harness (beyond the bound: RETRIES_EXHAUSTED)", async () => {
    const w = await bootPush();
    const run = await w.seed('dlv1');
    const response = await w.post(w.envelope(w.stepReady(run.runId), { deliveryAttempt: 11 }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      outcome: { kind: 'failed', errorCode: 'RETRIES_EXHAUSTED' },
    });
    expect(w.handler.executions).toBe(0);
  });

  it('answers 500 without touching the store when the signing keys are unreachable', async () => {
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(testWorker(), {
      env: await envFor(PUSH_ENV),
      logger: log.logger,
      pushVerifier: { verify: () => Promise.reject(new Error('certs unreachable')) },
    });
    cleanups.push(() => handle.close());
    const response = await fetch(`http://127.0.0.1:${handle.health.port}${PUBSUB_PUSH_PATH}`, {
      method: 'POST',
      headers: { authorization: issuer.authorization() },
      body: '{}',
    });
    expect(response.status).toBe(500);
    expect(log.withEvent('http_request_failed')[0]).toMatchObject({
      path: PUBSUB_PUSH_PATH,
      stage: 'authentication',
    });
  });

  it('close() drains: a push in progress still gets its 200, one arriving while draining gets 500', async () => {
    const w = await bootPush({}, 10_000);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    w.handler.executeImpl = async (context) => {
      started();
      await gate;
      return jsonResult(context);
    };
    const run = await w.seed('drn1');
    const other = await w.seed('drn2');
    const inFlight = w.post(w.envelope(w.stepReady(run.runId)));
    await running;

    const closing = w.handle.close();
    await expectEventually(() => expect(w.log.withEvent('transport_draining')).toHaveLength(1));
    const late = await w.post(w.envelope(w.stepReady(other.runId)));
    expect(late.status).toBe(500);
    expect(w.log.withEvent('message_nacked')[0]).toMatchObject({ reason: 'draining' });

    release();
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(await finished.json()).toMatchObject({ outcome: { kind: 'executed' } });
    await closing;
    expect((await w.store.inner.get(other.runId))?.run.steps[STEP]?.status).toBe('READY');
  });

  it('accepts POST only', async () => {
    const w = await bootPush();
    const response = await fetch(w.url);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('TDA_INGRESS configuration', () => {
  it('pull (default) keeps the streaming pull and serves no push route', async () => {
    const env = await envFor();
    expect(loadConfig(SERVICE, schema, env).TDA_INGRESS).toBe('pull');
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(testWorker(), { env, logger: log.logger });
    cleanups.push(() => handle.close());
    const response = await fetch(`http://127.0.0.1:${handle.health.port}${PUBSUB_PUSH_PATH}`, {
      method: 'POST',
      body: '{}',
    });
    expect(response.status).toBe(404);
    expect(log.withEvent('service_started')[0]?.['ingress']).toEqual(['pubsub-pull']);
    expect(log.withEvent('service_started')[0]).not.toHaveProperty('push');
  });

  it('refineWorkerIngress: push without its settings is a config error naming both', () => {
    const refined = z.object(workerServiceEnv).superRefine(refineWorkerIngress);
    let error: unknown;
    try {
      loadConfig(SERVICE, refined, { TDA_INGRESS: 'push' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'TDA_PUSH_AUDIENCE: is required when TDA_INGRESS=push',
      'TDA_PUSH_SERVICE_ACCOUNT: is required when TDA_INGRESS=push',
    ]);
    expect(() =>
      loadConfig(SERVICE, refined, { ...PUSH_ENV, TDA_PUSH_SERVICE_ACCOUNT: 'not-an-email' }),
    ).toThrow(/TDA_PUSH_SERVICE_ACCOUNT: must be a service account email/);
    expect(() => loadConfig(SERVICE, refined, { TDA_INGRESS: 'sideways' })).toThrow(/TDA_INGRESS/);
  });

  it('bootstrapWorker refuses push without its settings before opening any backend', async () => {
    const createBackendsSpy = vi.fn(createBackends);
    // testWorker's schema has no refineWorkerIngress: the boot itself must refuse.
    const boot = bootstrapWorker(testWorker(), {
      env: await envFor({ TDA_INGRESS: 'push', TDA_PUSH_AUDIENCE: 'aud' }),
      logger: createMemoryLogger().logger,
      createBackends: createBackendsSpy,
    });
    await expect(boot).rejects.toBeInstanceOf(ConfigError);
    await expect(boot).rejects.toThrow(
      /TDA_PUSH_SERVICE_ACCOUNT: is required when TDA_INGRESS=push/,
    );
    expect(createBackendsSpy).not.toHaveBeenCalled();
  });
});

describe('pubSubPushRoute without a consumer', () => {
  it('answers 503 (Pub/Sub retries) when the transport is not consuming', async () => {
    const log = createMemoryLogger();
    const subscriber = new PushSubscriptionBroker({
      publish: () => Promise.resolve('1'),
      subscribe: () => Promise.reject(new Error('unused')),
      seek: () => Promise.resolve(),
      close: () => Promise.resolve(),
    });
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      routes: [
        pubSubPushRoute({
          subscriber,
          subscription: 'tda-step-ready-ohlcv-export-sub',
          verifier: issuer.verifier(),
          logger: log.logger,
        }),
      ],
    });
    cleanups.push(() => server.close());
    const response = await fetch(`http://127.0.0.1:${server.port}${PUBSUB_PUSH_PATH}`, {
      method: 'POST',
      headers: { authorization: issuer.authorization() },
      body: JSON.stringify(
        encodePushEnvelope({ subscription: SUBSCRIPTION, messageId: 'm', data: {} }),
      ),
    });
    expect(response.status).toBe(503);
    expect(log.withEvent('pubsub_push_rejected')[0]).toMatchObject({
      status: 503,
      reason: 'not_consuming',
      messageId: 'm',
    });
  });
});
