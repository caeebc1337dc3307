import {
  ArtifactReadError,
  InMemoryArtifactStore,
  sha256Hex,
  type ArtifactStore,
} from '@tda/artifacts';
import { validate, type FlowRun } from '@tda/contracts';
import { flowCatalogue } from '@tda/flow-engine';
import { FirestoreFlowRunStore } from '@tda/flow-store';
import { failingFirestore, grpcError } from '@tda/flow-store/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ARTIFACT_RESPONSE_BYTES } from './runs/step-artifact.service';
import {
  collectStepReady,
  simulateWorker,
  startTestOrchestrator,
  TEST_TOKEN,
  type TestOrchestrator,
} from './testing/orchestrator.harness';

const FLOW_1 = 'scheduled_month_week_report_v1';
const TRIGGER = { flowKey: FLOW_1, scope: { symbol: 'BTC-USDT' } };

function asRun(body: unknown): FlowRun {
  const checked = validate.flowRun(body);
  if (!checked.ok) throw new Error(`not a FlowRun: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

function asApiError(body: unknown): {
  code: string;
  message: string;
  details?: Record<string, unknown>;
} {
  const checked = validate.apiError(body);
  if (!checked.ok) throw new Error(`not an ApiError: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

async function allRuns(orc: TestOrchestrator): Promise<FlowRun[]> {
  return (await orc.store.list({ limit: 100 })).runs;
}

describe('orchestrator HTTP API', () => {
  let orc: TestOrchestrator;

  beforeEach(async () => {
    orc = await startTestOrchestrator();
  });

  afterEach(async () => {
    await orc.close();
  });

  describe('auth', () => {
    it('GET /healthz needs no token', async () => {
      const res = await orc.request('GET', '/healthz', { token: null });
      expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
    });

    it.each([
      ['no Authorization header', null, undefined],
      ['a wrong token', 'wrong-token-0123456789abcdef', undefined],
      ['a token with the right prefix only', TEST_TOKEN.slice(0, 10), undefined],
      ['another scheme', null, { authorization: `Basic ${TEST_TOKEN}` }],
    ])('401 UNAUTHENTICATED with %s, and POST /runs creates nothing', async (_, token, headers) => {
      for (const [method, path, body] of [
        ['GET', '/runs', undefined],
        ['GET', '/flows', undefined],
        ['POST', '/runs', TRIGGER],
      ] as const) {
        const res = await orc.request(method, path, {
          token,
          body,
          ...(headers ? { headers } : {}),
        });
        expect(res.status).toBe(401);
        expect(asApiError(res.body).code).toBe('UNAUTHENTICATED');
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
      expect(await allRuns(orc)).toEqual([]);
    });

    it('the API description is public', async () => {
      const res = await orc.request('GET', '/openapi.json', { token: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ openapi: '3.1.0' });
    });
  });

  describe('POST /runs', () => {
    it('creates flow 1, advances it and publishes step-ready for its first steps: 201 + Location', async () => {
      const consumer = await collectStepReady(orc.broker, [
        'OHLCV_EXPORT',
        'CHART_EXPORT',
        'LLM_REPORT',
      ]);
      const res = await orc.request('POST', '/runs', { body: TRIGGER });
      expect(res.status).toBe(201);
      const run = asRun(res.body);
      expect(res.headers.get('location')).toBe(`/runs/${run.runId}`);
      expect(run).toMatchObject({
        flowKey: FLOW_1,
        status: 'RUNNING',
        ownerId: 'local-user',
        trigger: { type: 'USER', source: 'orchestrator-api' },
      });
      // default run deadline (TDA_DEFAULT_RUN_DEADLINE_SECONDS = 3600)
      expect(Date.parse(run.deadlineAt ?? '') - Date.parse(run.createdAt)).toBe(3_600_000);
      const ready = Object.entries(run.steps)
        .filter(([, s]) => s.status === 'READY')
        .map(([id]) => id);
      expect(ready).toEqual(['ohlcv_export:1M', 'ohlcv_export:1w']);
      expect((await orc.store.get(run.runId))?.run).toEqual(run);

      await expect.poll(() => consumer.received.length).toBe(2);
      expect(consumer.received.map((m) => m.body.stepId).sort()).toEqual(ready);
      for (const message of consumer.received) {
        expect(validate.stepReady(message.body).ok).toBe(true);
        expect(message.body).toMatchObject({
          runId: run.runId,
          stepType: 'OHLCV_EXPORT',
          attempt: 0,
          reason: 'advance',
        });
        expect(message.attributes).toMatchObject({
          messageType: 'step_ready',
          runId: run.runId,
          stepId: message.body.stepId,
          stepType: 'OHLCV_EXPORT',
        });
        expect(message.attributes['traceparent']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      }
      expect(orc.logs.withEvent('run_created')).toHaveLength(1);
      expect(orc.logs.withEvent('step_dispatched')).toHaveLength(2);
      await consumer.close();
    });

    it('carries the caller trace into the published messages', async () => {
      const consumer = await collectStepReady(orc.broker, ['OHLCV_EXPORT']);
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const res = await orc.request('POST', '/runs', {
        body: TRIGGER,
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-request-id')).toBe(traceId);
      await expect.poll(() => consumer.received.length).toBe(2);
      for (const m of consumer.received) expect(m.attributes['traceparent']).toContain(traceId);
      await consumer.close();
    });

    it('uses X-TDA-Owner as the owner, trigger and deadline from the body', async () => {
      const res = await orc.request('POST', '/runs', {
        body: {
          ...TRIGGER,
          trigger: { type: 'SCHEDULER', source: 'cron-daily' },
          deadlineSeconds: 120,
        },
        headers: { 'X-TDA-Owner': 'alice@example.com' },
      });
      expect(res.status).toBe(201);
      const run = asRun(res.body);
      expect(run.ownerId).toBe('alice@example.com');
      expect(run.trigger).toEqual({ type: 'SCHEDULER', source: 'cron-daily' });
      expect(Date.parse(run.deadlineAt ?? '') - Date.parse(run.createdAt)).toBe(120_000);
    });

    it.each([
      ['a missing scope', { flowKey: FLOW_1 }, 'invalid trigger request'],
      ['an unknown field', { ...TRIGGER, extra: true }, 'invalid trigger request'],
      ['a malformed flowKey', { ...TRIGGER, flowKey: 'Flow 1' }, 'invalid trigger request'],
      ['a bad symbol', { flowKey: FLOW_1, scope: { symbol: 'B' } }, 'invalid trigger request'],
      ['a too short deadline', { ...TRIGGER, deadlineSeconds: 1 }, 'invalid trigger request'],
      ['a non-object body', [1, 2], 'invalid trigger request'],
      [
        'timeframes flow 1 does not allow',
        { flowKey: FLOW_1, scope: { symbol: 'BTC-USDT', timeframes: ['1d'] } },
        'scope.timeframes',
      ],
      [
        'an unknown scope field',
        { flowKey: FLOW_1, scope: { symbol: 'BTC-USDT', colour: 'red' } },
        'colour',
      ],
    ])('400 INVALID_REQUEST for %s, nothing created or published', async (_, body, message) => {
      const consumer = await collectStepReady(orc.broker, ['OHLCV_EXPORT']);
      const res = await orc.request('POST', '/runs', { body });
      expect(res.status).toBe(400);
      const error = asApiError(res.body);
      expect(error.code).toBe('INVALID_REQUEST');
      expect(error.message).toContain(message);
      if (message === 'invalid trigger request') {
        expect(Array.isArray(error.details?.['issues'])).toBe(true);
      }
      expect(await allRuns(orc)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(consumer.received).toEqual([]);
      await consumer.close();
    });

    it('400 with the available flow keys for an unknown flowKey', async () => {
      const res = await orc.request('POST', '/runs', { body: { ...TRIGGER, flowKey: 'nope_v1' } });
      expect(res.status).toBe(400);
      const error = asApiError(res.body);
      expect(error).toMatchObject({ code: 'INVALID_REQUEST' });
      expect(error.details?.['availableFlowKeys']).toEqual(flowCatalogue.keys());
      expect(await allRuns(orc)).toEqual([]);
    });

    it('400 for a body that is not JSON, and for an invalid X-TDA-Owner', async () => {
      const bad = await orc.request('POST', '/runs', { rawBody: '{"flowKey": ' });
      expect(bad.status).toBe(400);
      expect(asApiError(bad.body)).toMatchObject({
        code: 'INVALID_REQUEST',
        message: 'request body is not valid JSON',
      });
      const owner = await orc.request('POST', '/runs', {
        body: TRIGGER,
        headers: { 'X-TDA-Owner': 'not/an owner' },
      });
      expect(owner.status).toBe(400);
      expect(asApiError(owner.body).message).toContain('X-TDA-Owner');
      expect(await allRuns(orc)).toEqual([]);
    });

    it('400 for a body over the size limit, without creating anything', async () => {
      const res = await orc.request('POST', '/runs', {
        rawBody: JSON.stringify({ ...TRIGGER, idempotencyKey: 'x'.repeat(200_000) }),
      });
      expect(res.status).toBe(400);
      expect(asApiError(res.body)).toMatchObject({
        code: 'INVALID_REQUEST',
        details: { httpStatus: 413 },
      });
      expect(await allRuns(orc)).toEqual([]);
    });
  });

  describe('idempotency', () => {
    it('the same (owner, key) returns the existing run with 200 and creates and publishes nothing more', async () => {
      const consumer = await collectStepReady(orc.broker, ['OHLCV_EXPORT']);
      const body = { ...TRIGGER, idempotencyKey: 'daily-2025-01-15' };
      const first = await orc.request('POST', '/runs', { body });
      expect(first.status).toBe(201);
      const second = await orc.request('POST', '/runs', { body });
      expect(second.status).toBe(200);
      expect(asRun(second.body).runId).toBe(asRun(first.body).runId);
      expect(second.headers.get('location')).toBe(`/runs/${asRun(first.body).runId}`);
      expect(await allRuns(orc)).toHaveLength(1);
      await expect.poll(() => consumer.received.length).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(consumer.received).toHaveLength(2);
      await consumer.close();
    });

    it('concurrent triggers with one key create exactly one run (serialized in this process)', async () => {
      const body = { ...TRIGGER, idempotencyKey: 'burst' };
      const results = await Promise.all(
        Array.from({ length: 6 }, () => orc.request('POST', '/runs', { body })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
      const ids = new Set(results.map((r) => asRun(r.body).runId));
      expect(ids.size).toBe(1);
      expect(await allRuns(orc)).toHaveLength(1);
    });

    it('keys are per owner; a key reused for a different request is a 409', async () => {
      const body = { ...TRIGGER, idempotencyKey: 'k1' };
      const alice = await orc.request('POST', '/runs', {
        body,
        headers: { 'X-TDA-Owner': 'alice' },
      });
      const bob = await orc.request('POST', '/runs', { body, headers: { 'X-TDA-Owner': 'bob' } });
      expect([alice.status, bob.status]).toEqual([201, 201]);
      expect(asRun(alice.body).runId).not.toBe(asRun(bob.body).runId);

      const other = await orc.request('POST', '/runs', {
        body: { ...body, scope: { symbol: 'ETH-USDT' } },
        headers: { 'X-TDA-Owner': 'alice' },
      });
      expect(other.status).toBe(409);
      expect(asApiError(other.body)).toMatchObject({
        code: 'CONFLICT',
        details: { runId: asRun(alice.body).runId, idempotencyKey: 'k1' },
      });
      // same request after defaults are resolved (timeframes spelled out) is the same request
      const same = await orc.request('POST', '/runs', {
        body: { ...body, scope: { timeframes: ['1w', '1M'], symbol: 'BTC-USDT' } },
        headers: { 'X-TDA-Owner': 'alice' },
      });
      expect(same.status).toBe(200);
      expect(await allRuns(orc)).toHaveLength(2);
    });
  });

  describe('GET /runs/:runId and GET /runs', () => {
    it('returns a run, 404 for an unknown one, 400 for a malformed id', async () => {
      const created = asRun((await orc.request('POST', '/runs', { body: TRIGGER })).body);
      const got = await orc.request('GET', `/runs/${created.runId}`);
      expect(got.status).toBe(200);
      expect(asRun(got.body)).toEqual(created);

      const missing = await orc.request('GET', '/runs/20250115-100000_BTC-USDT_zzzzz');
      expect(missing.status).toBe(404);
      expect(asApiError(missing.body)).toMatchObject({
        code: 'NOT_FOUND',
        details: { runId: '20250115-100000_BTC-USDT_zzzzz' },
      });
      const malformed = await orc.request('GET', '/runs/not-a-run');
      expect(malformed.status).toBe(400);
      expect(asApiError(malformed.body).code).toBe('INVALID_REQUEST');
    });

    it('pages newest first with a cursor and filters by status, flowKey and owner', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        orc.clock.advance(1_000);
        const res = await orc.request('POST', '/runs', {
          body:
            i === 4
              ? { flowKey: 'user_multi_tf_report_v1', scope: { symbol: 'ETH-USDT' } }
              : TRIGGER,
        });
        ids.push(asRun(res.body).runId);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: { status: number; body: unknown } = await orc.request(
          'GET',
          `/runs?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        );
        expect(res.status).toBe(200);
        const page = res.body as { runs: FlowRun[]; nextCursor: string | null };
        expect(page.runs.length).toBeLessThanOrEqual(2);
        seen.push(...page.runs.map((r) => r.runId));
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== null && pages < 10);
      expect(seen).toEqual([...ids].reverse());
      expect(pages).toBe(3);

      // The owner is the acting owner (an admin names one with X-TDA-Owner), not a parameter.
      const odd = { headers: { 'X-TDA-Owner': 'odd' } };
      const oddRun = asRun((await orc.request('POST', '/runs', { body: TRIGGER, ...odd })).body);
      const byOwner = (await orc.request('GET', '/runs', odd)).body as { runs: FlowRun[] };
      expect(byOwner.runs.map((r) => r.runId)).toEqual([oddRun.runId]);
      expect((await orc.request('GET', '/runs?ownerId=odd')).status).toBe(400);
      const byFlow = (await orc.request('GET', '/runs?flowKey=user_multi_tf_report_v1')).body as {
        runs: FlowRun[];
      };
      expect(byFlow.runs.map((r) => r.runId)).toEqual([ids[4]]);
      const bySymbol = (await orc.request('GET', '/runs?symbol=ETH-USDT')).body as {
        runs: FlowRun[];
      };
      expect(bySymbol.runs.map((r) => r.runId)).toEqual([ids[4]]);
      await orc.request('POST', `/runs/${String(ids[0])}/cancel`);
      const cancelled = (await orc.request('GET', '/runs?status=CANCELLED')).body as {
        runs: FlowRun[];
      };
      expect(cancelled.runs.map((r) => r.runId)).toEqual([ids[0]]);
      const running = (await orc.request('GET', '/runs?status=RUNNING&limit=100')).body as {
        runs: FlowRun[];
      };
      expect(running.runs).toHaveLength(4);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['status=DONE', 'status'],
      ['cursor=%21%21notacursor', 'cursor'],
      ['stauts=RUNNING', 'stauts'],
      ['flowKey=Bad%20Key', 'flowKey'],
      ['symbol=BTC%20USDT', 'symbol'],
    ])('400 INVALID_REQUEST for ?%s', async (query, mentioned) => {
      const res = await orc.request('GET', `/runs?${query}`);
      expect(res.status).toBe(400);
      const error = asApiError(res.body);
      expect(error.code).toBe('INVALID_REQUEST');
      expect(`${error.message} ${JSON.stringify(error.details)}`).toContain(mentioned);
    });
  });

  describe('POST /runs/:runId/cancel', () => {
    it('cancels a running run once; repeating it returns the same run unchanged', async () => {
      const created = asRun((await orc.request('POST', '/runs', { body: TRIGGER })).body);
      orc.clock.advance(5_000);
      const first = await orc.request('POST', `/runs/${created.runId}/cancel`);
      expect(first.status).toBe(200);
      const cancelled = asRun(first.body);
      expect(cancelled.status).toBe('CANCELLED');
      expect(cancelled.cancelRequestedAt).toBe(orc.clock.now().toISOString());
      expect(cancelled.error?.code).toBe('CANCELLED');
      expect(Object.values(cancelled.steps).every((s) => s.status === 'CANCELLED')).toBe(true);

      orc.clock.advance(5_000);
      const again = await orc.request('POST', `/runs/${created.runId}/cancel`);
      expect(again.status).toBe(200);
      expect(asRun(again.body)).toEqual(cancelled);
      expect((await orc.store.get(created.runId))?.run).toEqual(cancelled);
    });

    it('409 for a run that already finished, 404 for an unknown run, 400 for a bad id', async () => {
      const created = asRun((await orc.request('POST', '/runs', { body: TRIGGER })).body);
      const stored = await orc.store.get(created.runId);
      if (stored === null) throw new Error('run missing');
      await orc.store.update(created.runId, { status: 'SUCCEEDED' }, stored.version);
      const finished = await orc.request('POST', `/runs/${created.runId}/cancel`);
      expect(finished.status).toBe(409);
      expect(asApiError(finished.body)).toMatchObject({
        code: 'CONFLICT',
        details: { runId: created.runId, status: 'SUCCEEDED' },
      });
      const unknown = await orc.request('POST', '/runs/20250115-100000_BTC-USDT_zzzzz/cancel');
      expect(unknown.status).toBe(404);
      const bad = await orc.request('POST', '/runs/nope/cancel');
      expect(bad.status).toBe(400);
    });
  });

  describe('GET /runs/:runId/steps/:stepId/blocked-on', () => {
    it('explains a waiting step; 404 for an unknown step; 400 for an unsafe step id', async () => {
      const created = asRun((await orc.request('POST', '/runs', { body: TRIGGER })).body);
      const res = await orc.request(
        'GET',
        `/runs/${created.runId}/steps/charts:1M:ctpl_default_v1/blocked-on`,
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        runId: created.runId,
        stepId: 'charts:1M:ctpl_default_v1',
        status: 'PENDING',
        reasons: [
          {
            kind: 'waiting_for_dependencies',
            dependencies: [{ stepId: 'ohlcv_export:1M', status: 'READY' }],
          },
        ],
      });
      orc.clock.advance(30_000);
      const ready = await orc.request(
        'GET',
        `/runs/${created.runId}/steps/ohlcv_export:1M/blocked-on`,
      );
      expect(ready.body).toMatchObject({
        reasons: [{ kind: 'ready_not_claimed', waitingMs: 30_000 }],
      });

      const unknown = await orc.request('GET', `/runs/${created.runId}/steps/nope:1d/blocked-on`);
      expect(unknown.status).toBe(404);
      expect(asApiError(unknown.body)).toMatchObject({
        code: 'NOT_FOUND',
        details: { stepId: 'nope:1d' },
      });
      const unsafe = await orc.request('GET', `/runs/${created.runId}/steps/a.b/blocked-on`);
      expect(unsafe.status).toBe(400);
    });
  });

  describe('GET /runs/:runId/steps/:stepId/artifact', () => {
    const STEP = 'ohlcv_export:1M';

    /** Flow 1 with ohlcv_export:1M SUCCEEDED (real claim/finalize); returns the recorded uri. */
    async function succeededStep(target: TestOrchestrator = orc): Promise<[FlowRun, string]> {
      const run = asRun((await target.request('POST', '/runs', { body: TRIGGER })).body);
      await simulateWorker(target.store, run.runId, STEP, target.clock.now);
      const uri = (await target.store.get(run.runId))?.run.steps[STEP]?.outputs.gcs_uri;
      if (uri === undefined) throw new Error('finalize recorded no gcs_uri');
      return [run, uri];
    }

    /** A JSON document of exactly `size` bytes. */
    function jsonOfSize(size: number): Buffer {
      const shell = '{"pad":""}';
      return Buffer.from(`{"pad":"${'x'.repeat(size - shell.length)}"}`);
    }

    it('200: the stored bytes as JSON, with the uri and sha256 in headers; needs the token', async () => {
      const [run, uri] = await succeededStep();
      const document = { symbol: 'BTC-USDT', candles: [[1, 2, 3, 4, 5, 6]], note: 'é' };
      const bytes = Buffer.from(`${JSON.stringify(document, null, 2)}\n`);
      await orc.artifacts.put(uri, bytes, { contentType: 'application/json' });

      const path = `/runs/${run.runId}/steps/${STEP}/artifact`;
      const res = await orc.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(document);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('x-tda-artifact-uri')).toBe(uri);
      expect(res.headers.get('x-tda-artifact-sha256')).toBe(sha256Hex(bytes));
      const raw = await fetch(`${orc.baseUrl}${path}`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      });
      expect(Buffer.from(await raw.arrayBuffer()).equals(bytes)).toBe(true);

      const anonymous = await orc.request('GET', path, { token: null });
      expect(anonymous.status).toBe(401);
      expect(asApiError(anonymous.body).code).toBe('UNAUTHENTICATED');
    });

    it('404 for an unknown run or step, 400 for malformed ids', async () => {
      const [run] = await succeededStep();
      const unknownRun = await orc.request(
        'GET',
        `/runs/20250115-100000_BTC-USDT_zzzzz/steps/${STEP}/artifact`,
      );
      expect(unknownRun.status).toBe(404);
      expect(asApiError(unknownRun.body).code).toBe('NOT_FOUND');
      const unknownStep = await orc.request('GET', `/runs/${run.runId}/steps/nope:1d/artifact`);
      expect(unknownStep.status).toBe(404);
      expect(asApiError(unknownStep.body)).toMatchObject({
        code: 'NOT_FOUND',
        details: { stepId: 'nope:1d' },
      });
      expect((await orc.request('GET', `/runs/nope/steps/${STEP}/artifact`)).status).toBe(400);
      expect((await orc.request('GET', `/runs/${run.runId}/steps/a.b/artifact`)).status).toBe(400);
    });

    it('409 CONFLICT naming the status while the step has no artifact', async () => {
      const run = asRun((await orc.request('POST', '/runs', { body: TRIGGER })).body);
      const res = await orc.request('GET', `/runs/${run.runId}/steps/${STEP}/artifact`);
      expect(res.status).toBe(409);
      const error = asApiError(res.body);
      expect(error).toMatchObject({
        code: 'CONFLICT',
        details: { runId: run.runId, stepId: STEP, status: 'READY' },
        retryable: false,
      });
      expect(error.message).toContain('has no artifact (status READY)');
    });

    it('serves exactly 1 MiB; refuses one byte more with 502 too_large', async () => {
      expect(MAX_ARTIFACT_RESPONSE_BYTES).toBe(1024 * 1024);
      const [run, uri] = await succeededStep();
      const path = `/runs/${run.runId}/steps/${STEP}/artifact`;
      const atLimit = jsonOfSize(MAX_ARTIFACT_RESPONSE_BYTES);
      expect(atLimit.length).toBe(MAX_ARTIFACT_RESPONSE_BYTES);
      await orc.artifacts.put(uri, atLimit, { contentType: 'application/json' });
      const ok = await orc.request('GET', path);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-tda-artifact-sha256')).toBe(sha256Hex(atLimit));

      const [other, otherUri] = await succeededStep();
      await orc.artifacts.put(otherUri, jsonOfSize(MAX_ARTIFACT_RESPONSE_BYTES + 1), {
        contentType: 'application/json',
      });
      const res = await orc.request('GET', `/runs/${other.runId}/steps/${STEP}/artifact`);
      expect(res.status).toBe(502);
      const error = asApiError(res.body);
      expect(error).toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        retryable: false,
        details: {
          reason: 'too_large',
          uri: otherUri,
          bytes: MAX_ARTIFACT_RESPONSE_BYTES + 1,
          limitBytes: MAX_ARTIFACT_RESPONSE_BYTES,
        },
      });
      expect(error.message).toContain('read it from storage directly');
    });

    it('502 (not retryable) for a recorded object that is missing, not JSON, or in another bucket', async () => {
      const [missing] = await succeededStep();
      const gone = await orc.request('GET', `/runs/${missing.runId}/steps/${STEP}/artifact`);
      expect(gone.status).toBe(502);
      expect(asApiError(gone.body)).toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        retryable: false,
        details: { reason: 'missing' },
      });

      const [garbled, garbledUri] = await succeededStep();
      await orc.artifacts.put(garbledUri, Buffer.from('{"truncated": '), {
        contentType: 'application/json',
      });
      const notJson = await orc.request('GET', `/runs/${garbled.runId}/steps/${STEP}/artifact`);
      expect(notJson.status).toBe(502);
      expect(asApiError(notJson.body).details).toMatchObject({ reason: 'not_json' });

      const [foreign] = await succeededStep();
      const stored = await orc.store.get(foreign.runId);
      if (stored === null) throw new Error('run missing');
      const elsewhere = 'gs://someone-elses-bucket/secrets.json';
      await orc.artifacts.put(elsewhere, Buffer.from('{"secret":1}'), {
        contentType: 'application/json',
      });
      await orc.store.update(
        foreign.runId,
        { [`steps.${STEP}.outputs.gcs_uri`]: elsewhere },
        stored.version,
      );
      const res = await orc.request('GET', `/runs/${foreign.runId}/steps/${STEP}/artifact`);
      expect(res.status).toBe(502);
      expect(asApiError(res.body).details).toMatchObject({
        reason: 'foreign_bucket',
        bucket: 'tda-artifacts',
      });
      expect(JSON.stringify(res.body)).not.toContain('"secret"');
    });

    it('502 retryable for a storage failure; the storage reason is only logged', async () => {
      const memory = new InMemoryArtifactStore();
      const failing: ArtifactStore = {
        put: (uri, data, options) => memory.put(uri, data, options),
        exists: (uri) => memory.exists(uri),
        signedUrl: (uri, options) => memory.signedUrl(uri, options),
        read: (uri) => Promise.reject(new ArtifactReadError(uri, 'ECONNRESET at 10.1.2.3:443')),
      };
      const broken = await startTestOrchestrator({ artifacts: failing });
      try {
        const [run, uri] = await succeededStep(broken);
        const res = await broken.request('GET', `/runs/${run.runId}/steps/${STEP}/artifact`);
        expect(res.status).toBe(502);
        expect(asApiError(res.body)).toMatchObject({
          code: 'UPSTREAM_UNAVAILABLE',
          retryable: true,
          details: { reason: 'read_failed', uri, storageCode: 'UPSTREAM_UNAVAILABLE' },
        });
        expect(JSON.stringify(res.body)).not.toContain('10.1.2.3');
        const logged = broken.logs.records.find((r) => r.message === 'artifact read failed');
        expect(logged).toMatchObject({ event: 'http_request_failed', stepId: STEP, uri });
        expect(JSON.stringify(logged)).toContain('10.1.2.3');
      } finally {
        await broken.close();
      }
    });

    it("files: a PNG of the step's bundle with its type; other names, steps and owners are 404s", async () => {
      const [run, uri] = await succeededStep();
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
      const name = `${STEP}.candles.png`;
      await orc.artifacts.put(`${uri.slice(0, uri.lastIndexOf('/') + 1)}${name}`, png, {
        contentType: 'image/png',
      });
      const base = `${orc.baseUrl}/runs/${run.runId}/steps/${STEP}/files/`;
      const auth = { headers: { authorization: `Bearer ${TEST_TOKEN}` } };
      const res = await fetch(`${base}${encodeURIComponent(name)}`, auth);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
      for (const other of [
        `${STEP}.volume.png`, // not stored
        'ohlcv_export:1w.candles.png', // another step's name
        `${STEP}.candles.exe`, // not a bundle type
        '..%2Fsecret.png',
      ]) {
        const refused = await fetch(`${base}${other}`, auth);
        expect({ other, status: refused.status }).toEqual({ other, status: 404 });
      }
      const alice = await orc.tokenFor('alice');
      const foreign = await fetch(`${base}${encodeURIComponent(name)}`, {
        headers: { authorization: `Bearer ${alice}` },
      });
      expect(foreign.status).toBe(404);
    });
  });

  describe('other routes', () => {
    it('GET /flows lists the catalogue', async () => {
      const res = await orc.request('GET', '/flows');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ flows: flowCatalogue.list() });
      expect(flowCatalogue.keys()).toContain(FLOW_1);
    });

    it('GET /metrics (public) exposes dispatch and advance counters in Prometheus text', async () => {
      await orc.request('POST', '/runs', { body: TRIGGER });
      const res = await fetch(`${orc.baseUrl}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const text = await res.text();
      expect(text).toContain(
        'tda_steps_dispatched_total{service="orchestrator",step_type="OHLCV_EXPORT",reason="advance"} 2',
      );
      expect(text).toContain(
        'tda_runs_advanced_total{service="orchestrator",run_status="RUNNING"} 1',
      );
    });

    it('unknown routes are 404 NOT_FOUND in the ApiError format', async () => {
      const res = await orc.request('GET', '/nothing/here');
      expect(res.status).toBe(404);
      expect(asApiError(res.body)).toMatchObject({ code: 'NOT_FOUND' });
    });

    it('an unexpected failure is a generic 500 with a requestId; the cause is only logged', async () => {
      const failing = await startTestOrchestrator({
        store: {
          create: () => Promise.reject(new Error('disk on fire')),
          get: () => Promise.reject(new Error('disk on fire')),
          update: () => Promise.reject(new Error('disk on fire')),
          list: () => Promise.resolve({ runs: [], nextCursor: null }),
          count: () => Promise.resolve(0),
        },
      });
      try {
        const res = await failing.request('POST', '/runs', { body: TRIGGER });
        expect(res.status).toBe(500);
        const error = asApiError(res.body);
        expect(error.code).toBe('INTERNAL_ERROR');
        expect(JSON.stringify(res.body)).not.toContain('disk on fire');
        expect(JSON.stringify(res.body)).not.toContain('at ');
        const requestId = (res.body as { requestId?: string }).requestId;
        expect(requestId).toMatch(/^[0-9a-f]{32}$/);
        const logged = failing.logs.records.find((r) => r.message === 'http request failed');
        expect(logged).toMatchObject({ requestId, path: '/runs' });
        expect(JSON.stringify(logged)).toContain('disk on fire');
      } finally {
        await failing.close();
      }
    });

    it('a Firestore outage is a 502 UPSTREAM_UNAVAILABLE (retryable) on every route that reads or writes', async () => {
      // The real Firestore adapter over a client whose every call fails with gRPC UNAVAILABLE.
      const outage = await startTestOrchestrator({
        store: new FirestoreFlowRunStore(
          failingFirestore(() => grpcError(14, '14 UNAVAILABLE: No connection established')),
        ),
      });
      const RUN = '20250115-100000_BTC-USDT_zzzzz';
      try {
        const answers = [
          await outage.request('POST', '/runs', { body: TRIGGER }),
          await outage.request('GET', `/runs/${RUN}`),
          await outage.request('GET', '/runs'),
          await outage.request('POST', `/runs/${RUN}/cancel`),
          await outage.request('GET', `/runs/${RUN}/steps/ohlcv_export:1M/blocked-on`),
        ];
        for (const res of answers) {
          expect(res.status).toBe(502);
          expect(asApiError(res.body)).toMatchObject({
            code: 'UPSTREAM_UNAVAILABLE',
            retryable: true,
            details: { grpcStatus: 'UNAVAILABLE' },
            requestId: expect.stringMatching(/^[0-9a-f]{32}$/),
          });
          expect(JSON.stringify(res.body)).not.toContain('No connection established');
        }
        // the client's own error is logged with the request, never answered
        const logged = outage.logs.records.filter((r) => r.message === 'run store unavailable');
        expect(logged).toHaveLength(answers.length);
        expect(JSON.stringify(logged[0])).toContain('No connection established');
      } finally {
        await outage.close();
      }
    });
  });
});
