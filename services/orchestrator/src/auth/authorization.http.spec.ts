import 'reflect-metadata';
import type { FlowRun } from '@tda/contracts';
import { makeRecommendationEntry, makeReportEntry } from '@tda/report-index/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORCHESTRATOR_CONTROLLERS } from '../orchestrator.module';
import { startTestOrchestrator, type TestOrchestrator } from '../testing/orchestrator.harness';
import { openSse } from '../testing/sse-test.client';
import { routeAccessTable, type RouteAccess } from './route-access';

/**
 * Owner isolation on every route, with two owners (alice, bob, both `user`) and an admin: each
 * route of the app must have a row here (the first test fails when a route is added without
 * one). Owned resources of another owner are a 404, lists never show them, admin routes are a
 * 403 for a user, and nothing but the public routes answers without a credential.
 */
const TRIGGER = { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT' } };
const EVENTS_SUB = 'tda-step-events-sub';
const SCHEDULE = { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT' }, cron: '0 * * * *' };
const EVALUATION = {
  symbol: 'BTC-USDT',
  from: '2026-09-01T00:00:00Z',
  to: '2026-09-02T00:00:00Z',
  every: '1d',
  accountId: 'alice-wf',
};
const BACKTEST = {
  symbol: 'BTC-USDT',
  strategy: { kind: 'bollinger_breakout', params: { period: [20], k: [2] } },
};

interface Ctx {
  orc: TestOrchestrator;
  /** A fresh run of alice's (each mutating case gets its own). */
  run(): Promise<FlowRun>;
  account(): Promise<{ accountId: string; etag: string }>;
  /** A fresh schedule of alice's. */
  schedule(): Promise<string>;
  /** A backtest job of alice's (`fresh`: a new one, else the shared one). */
  backtest(fresh?: boolean): Promise<string>;
  /** A fresh walk-forward evaluation of alice's. */
  evaluation(): Promise<string>;
  reportId: string;
  recoId: string;
}

interface Call {
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

type Case =
  /** alice's own resource: alice gets `alice`, bob a 404. */
  | { kind: 'owned'; alice: number; call: (ctx: Ctx) => Promise<Call> }
  /** a list: alice's entry `id` is in alice's page and not in bob's. */
  | { kind: 'list'; call: (ctx: Ctx) => Promise<Call & { id: string }> }
  /** creates for the caller: bob's creation is bob's (`ownerField` of the body, default ownerId). */
  | { kind: 'create'; ownerField?: string; call: (ctx: Ctx) => Promise<Call> }
  /** the same for every principal. */
  | { kind: 'any'; status: number; call: (ctx: Ctx) => Promise<Call> }
  /** admin only: a user gets 403, the admin `admin`. */
  | { kind: 'admin'; admin: number; call: (ctx: Ctx) => Promise<Call> }
  | { kind: 'public'; call: () => Call }
  /** an event stream: `foreign` is a 404 for bob (one run) or a stream without alice's runs. */
  | { kind: 'stream'; foreign: 404 | 200; call: (ctx: Ctx) => Promise<Call> };

const at = (path: string, body?: unknown, headers?: Record<string, string>): Call => ({
  path,
  ...(body === undefined ? {} : { body }),
  ...(headers === undefined ? {} : { headers }),
});
const firstStep = (run: FlowRun): string => Object.keys(run.steps).sort()[0] ?? '';

const CASES: Record<string, Case> = {
  'GET /runs': { kind: 'list', call: async (c) => ({ ...at('/runs'), id: (await c.run()).runId }) },
  'POST /runs': { kind: 'create', call: () => Promise.resolve(at('/runs', TRIGGER)) },
  'GET /runs/:runId': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/runs/${(await c.run()).runId}`),
  },
  'GET /runs/:runId/status': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/runs/${(await c.run()).runId}/status`),
  },
  'POST /runs/:runId/cancel': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/runs/${(await c.run()).runId}/cancel`, {}),
  },
  'GET /runs/:runId/steps/:stepId/blocked-on': {
    kind: 'owned',
    alice: 200,
    call: async (c) => {
      const run = await c.run();
      return at(`/runs/${run.runId}/steps/${firstStep(run)}/blocked-on`);
    },
  },
  'GET /runs/:runId/steps/:stepId/artifact': {
    kind: 'owned',
    alice: 409, // exists, no artifact yet
    call: async (c) => {
      const run = await c.run();
      return at(`/runs/${run.runId}/steps/${firstStep(run)}/artifact`);
    },
  },
  'GET /runs/:runId/steps/:stepId/files/:fileName': {
    kind: 'owned',
    alice: 409, // exists, no artifact yet
    call: async (c) => {
      const run = await c.run();
      const stepId = firstStep(run);
      return at(`/runs/${run.runId}/steps/${stepId}/files/${stepId}.candles.png`);
    },
  },
  'POST /runs/:runId/steps/:stepId/retry': {
    kind: 'owned',
    alice: 409, // exists, not FAILED
    call: async (c) => {
      const run = await c.run();
      return at(`/runs/${run.runId}/steps/${firstStep(run)}/retry`, {});
    },
  },
  'POST /runs/:runId/retry': {
    kind: 'owned',
    alice: 409,
    call: async (c) => at(`/runs/${(await c.run()).runId}/retry`, {}),
  },
  'POST /runs/:runId/rerun': {
    kind: 'owned',
    alice: 409, // exists, still running: a rerun starts from a finished run
    call: async (c) => {
      const run = await c.run();
      return at(`/runs/${run.runId}/rerun`, { fromStepId: firstStep(run) });
    },
  },
  'GET /runs/:runId/events': {
    kind: 'stream',
    foreign: 404,
    call: async (c) => at(`/runs/${(await c.run()).runId}/events`),
  },
  'GET /events/stream': {
    kind: 'stream',
    foreign: 200,
    call: () => Promise.resolve(at('/events/stream')),
  },
  'GET /flows': { kind: 'any', status: 200, call: () => Promise.resolve(at('/flows')) },
  'GET /me': { kind: 'any', status: 200, call: () => Promise.resolve(at('/me')) },
  'GET /healthz': { kind: 'public', call: () => at('/healthz') },
  'GET /openapi.json': { kind: 'public', call: () => at('/openapi.json') },
  'GET /metrics': { kind: 'public', call: () => at('/metrics') },
  'POST /accounts': {
    kind: 'create',
    call: () =>
      Promise.resolve(
        at('/accounts', {
          accountId: `acc-${Math.random().toString(36).slice(2, 8)}`,
          quoteCurrency: 'USDT',
          cash: 10,
        }),
      ),
  },
  'GET /accounts': {
    kind: 'list',
    call: async (c) => ({ ...at('/accounts'), id: (await c.account()).accountId }),
  },
  'GET /accounts/:accountId': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/accounts/${(await c.account()).accountId}`),
  },
  'PUT /accounts/:accountId': {
    kind: 'owned',
    alice: 200,
    call: async (c) => {
      const { accountId, etag } = await c.account();
      return at(
        `/accounts/${accountId}`,
        { name: 'renamed', cash: 5, positions: [] },
        { 'if-match': etag },
      );
    },
  },
  'DELETE /accounts/:accountId': {
    kind: 'owned',
    alice: 204,
    call: async (c) => {
      const { accountId, etag } = await c.account();
      return { ...at(`/accounts/${accountId}`), headers: { 'if-match': etag } };
    },
  },
  'GET /reports': {
    kind: 'list',
    call: (c) => Promise.resolve({ ...at('/reports'), id: c.reportId }),
  },
  'GET /reports/:reportId': {
    kind: 'owned',
    alice: 200,
    call: (c) => Promise.resolve(at(`/reports/${c.reportId}`)),
  },
  'GET /recommendations': {
    kind: 'list',
    call: (c) => Promise.resolve({ ...at('/recommendations'), id: c.recoId }),
  },
  'GET /recommendations/:recoId': {
    kind: 'owned',
    alice: 200,
    call: (c) => Promise.resolve(at(`/recommendations/${c.recoId}`)),
  },
  'GET /admin/reconcile': {
    kind: 'admin',
    admin: 200,
    call: () => Promise.resolve(at('/admin/reconcile')),
  },
  'POST /schedules': { kind: 'create', call: () => Promise.resolve(at('/schedules', SCHEDULE)) },
  'GET /schedules': {
    kind: 'list',
    call: async (c) => ({ ...at('/schedules'), id: await c.schedule() }),
  },
  'GET /schedules/:scheduleId': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/schedules/${await c.schedule()}`),
  },
  'POST /schedules/:scheduleId/pause': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/schedules/${await c.schedule()}/pause`, {}),
  },
  'POST /schedules/:scheduleId/resume': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/schedules/${await c.schedule()}/resume`, {}),
  },
  'DELETE /schedules/:scheduleId': {
    kind: 'owned',
    alice: 204,
    call: async (c) => at(`/schedules/${await c.schedule()}`),
  },
  'POST /schedules/:scheduleId/fire': {
    kind: 'owned',
    alice: 400, // exists; a future slot is refused (alice's runs are at their quota here)
    call: async (c) =>
      at(`/schedules/${await c.schedule()}/fire`, { slotAt: '2999-01-01T00:00:00Z' }),
  },
  'GET /signals': { kind: 'any', status: 200, call: () => Promise.resolve(at('/signals')) },
  'POST /backtests/jobs': {
    kind: 'create',
    ownerField: 'owner_id',
    call: () => Promise.resolve(at('/backtests/jobs', BACKTEST)),
  },
  'GET /backtests/jobs': {
    kind: 'list',
    call: async (c) => ({ ...at('/backtests/jobs'), id: await c.backtest() }),
  },
  'GET /backtests/jobs/:jobId': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/backtests/jobs/${await c.backtest()}`),
  },
  'GET /backtests/jobs/:jobId/top': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/backtests/jobs/${await c.backtest()}/top`),
  },
  'POST /backtests/jobs/:jobId/cancel': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/backtests/jobs/${await c.backtest(true)}/cancel`, {}),
  },
  'POST /evaluations/recommendations': {
    kind: 'create',
    call: () =>
      Promise.resolve(at('/evaluations/recommendations', { ...EVALUATION, accountId: 'bob-wf' })),
  },
  'GET /evaluations': {
    kind: 'list',
    call: async (c) => ({ ...at('/evaluations'), id: await c.evaluation() }),
  },
  'GET /evaluations/:evaluationId': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/evaluations/${await c.evaluation()}`),
  },
  'POST /evaluations/:evaluationId/cancel': {
    kind: 'owned',
    alice: 200,
    call: async (c) => at(`/evaluations/${await c.evaluation()}/cancel`, {}),
  },
  'POST /admin/schedules/tick': {
    kind: 'admin',
    admin: 200,
    call: () => Promise.resolve(at('/admin/schedules/tick', {})),
  },
  'POST /admin/reconcile': {
    kind: 'admin',
    admin: 200,
    call: () => Promise.resolve(at('/admin/reconcile', {})),
  },
  'POST /admin/replay': {
    kind: 'admin',
    admin: 200,
    call: (c) => {
      const time = new Date(c.orc.clock.now().getTime() - 3_600_000).toISOString();
      return Promise.resolve(at('/admin/replay', { subscription: EVENTS_SUB, time, dryRun: true }));
    },
  },
  'POST /admin/snapshots': {
    kind: 'admin',
    admin: 201,
    call: () =>
      Promise.resolve(
        at('/admin/snapshots', {
          subscription: EVENTS_SUB,
          name: `s-${Math.random().toString(36).slice(2, 8)}`,
        }),
      ),
  },
  'POST /admin/index/backfill': {
    kind: 'admin',
    admin: 200,
    call: () => Promise.resolve(at('/admin/index/backfill', {})),
  },
  'POST /admin/tokens': {
    kind: 'admin',
    admin: 201,
    call: () =>
      Promise.resolve(at('/admin/tokens', { ownerId: 'carol', role: 'user', name: 'ci' })),
  },
  'GET /admin/tokens': {
    kind: 'admin',
    admin: 200,
    call: () => Promise.resolve(at('/admin/tokens')),
  },
  'DELETE /admin/tokens/:tokenId': {
    kind: 'admin',
    admin: 404,
    call: () => Promise.resolve(at('/admin/tokens/tok_0000000000000000')),
  },
  'GET /admin/identities': {
    kind: 'admin',
    admin: 200,
    call: () => Promise.resolve(at('/admin/identities')),
  },
  'PUT /admin/identities/:email': {
    kind: 'admin',
    admin: 200,
    call: () =>
      Promise.resolve(
        at('/admin/identities/carol@example.com', { ownerId: 'carol', role: 'user' }),
      ),
  },
  'DELETE /admin/identities/:email': {
    kind: 'admin',
    admin: 404,
    call: () => Promise.resolve(at('/admin/identities/nobody@example.com')),
  },
};

const key = (r: RouteAccess): string => `${r.method} ${r.path}`;
const ROUTES = routeAccessTable(ORCHESTRATOR_CONTROLLERS);

describe('authorization of every route', () => {
  let orc: TestOrchestrator;
  let ctx: Ctx;
  const tokens = { alice: '', bob: '', admin: '' };

  const send = (method: string, call: Call, token: string | null) =>
    orc.request(method, call.path, {
      token,
      ...(call.body === undefined ? {} : { body: call.body }),
      ...(call.headers === undefined ? {} : { headers: call.headers }),
    });

  beforeAll(async () => {
    // Every owned-run case creates a fresh run of alice's: more than the default 20 active ones.
    orc = await startTestOrchestrator({ env: { TDA_MAX_ACTIVE_RUNS_PER_OWNER: '100' } });
    tokens.alice = await orc.tokenFor('alice');
    tokens.bob = await orc.tokenFor('bob');
    tokens.admin = await orc.tokenFor('ops', 'admin');
    // An account each for the walk-forward evaluations (flow 4 sizes against it).
    for (const [owner, token] of [
      ['alice', tokens.alice],
      ['bob', tokens.bob],
    ] as const) {
      const body = { accountId: `${owner}-wf`, quoteCurrency: 'USDT', cash: 100 };
      expect((await orc.request('POST', '/accounts', { body, token })).status).toBe(201);
    }
    const report = makeReportEntry({ ownerId: 'alice' });
    const reco = makeRecommendationEntry({ ownerId: 'alice' });
    await orc.reportIndex.createReport(report);
    await orc.reportIndex.createRecommendation(reco);
    let accounts = 0;
    let sharedJob: string | undefined;
    ctx = {
      orc,
      reportId: report.reportId,
      recoId: reco.recoId,
      run: async () => {
        orc.clock.advance(1_000);
        const res = await orc.request('POST', '/runs', { body: TRIGGER, token: tokens.alice });
        expect(res.status).toBe(201);
        return res.body as FlowRun;
      },
      account: async () => {
        accounts += 1;
        const body = { accountId: `alice-${String(accounts)}`, quoteCurrency: 'USDT', cash: 100 };
        const res = await orc.request('POST', '/accounts', { body, token: tokens.alice });
        expect(res.status).toBe(201);
        return { accountId: body.accountId, etag: res.headers.get('etag') ?? '' };
      },
      backtest: async (fresh = false) => {
        if (!fresh && sharedJob !== undefined) return sharedJob;
        orc.clock.advance(1_000);
        const res = await orc.request('POST', '/backtests/jobs', {
          body: BACKTEST,
          token: tokens.alice,
        });
        expect(res.status).toBe(201);
        const jobId = (res.body as { job_id: string }).job_id;
        if (!fresh) sharedJob = jobId;
        return jobId;
      },
      evaluation: async () => {
        const res = await orc.request('POST', '/evaluations/recommendations', {
          body: EVALUATION,
          token: tokens.alice,
        });
        expect(res.status).toBe(201);
        return (res.body as { evaluationId: string }).evaluationId;
      },
      schedule: async () => {
        const res = await orc.request('POST', '/schedules', {
          body: SCHEDULE,
          token: tokens.alice,
        });
        expect(res.status).toBe(201);
        return (res.body as { scheduleId: string }).scheduleId;
      },
    };
  });
  afterAll(async () => {
    await orc.close();
  });

  it('has a decision and a case here for every route (a new route fails until it has both)', () => {
    expect(ROUTES.filter((r) => r.access === undefined)).toEqual([]);
    expect(ROUTES.map(key).sort()).toEqual(Object.keys(CASES).sort());
    for (const route of ROUTES) {
      const kind = CASES[key(route)]?.kind;
      const expected = kind === 'admin' ? 'admin' : kind === 'public' ? 'public' : 'user';
      expect({ route: key(route), access: route.access }).toEqual({
        route: key(route),
        access: expected,
      });
    }
  });

  it.each(ROUTES.map((r) => [key(r), r] as const))('%s', async (_name, route) => {
    const spec = CASES[key(route)];
    if (spec === undefined) throw new Error(`no case for ${key(route)}`);
    const { method } = route;
    if (spec.kind === 'public') {
      const response = await fetch(`${orc.baseUrl}${spec.call().path}`, { method });
      expect(response.status).toBe(200);
      return;
    }
    if (spec.kind === 'stream') {
      const call = await spec.call(ctx);
      const url = `${orc.baseUrl}${call.path}`;
      expect((await openSse(url, { token: null })).status).toBe(401);
      const bob = await openSse(url, { token: tokens.bob });
      bob.close();
      expect(bob.status).toBe(spec.foreign);
      const alice = await openSse(url, { token: tokens.alice });
      alice.close();
      expect(alice.status).toBe(200);
      return;
    }
    const anonymous = await send(method, await spec.call(ctx), null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ code: 'UNAUTHENTICATED' });
    switch (spec.kind) {
      case 'owned': {
        const call = await spec.call(ctx);
        const bob = await send(method, call, tokens.bob);
        expect(bob.status).toBe(404);
        expect(bob.body).toMatchObject({ code: 'NOT_FOUND' });
        expect((await send(method, call, tokens.alice)).status).toBe(spec.alice);
        break;
      }
      case 'list': {
        const call = await spec.call(ctx);
        const alice = await send(method, call, tokens.alice);
        expect(alice.status).toBe(200);
        expect(JSON.stringify(alice.body)).toContain(call.id);
        const bob = await send(method, call, tokens.bob);
        expect(bob.status).toBe(200);
        expect(JSON.stringify(bob.body)).not.toContain(call.id);
        break;
      }
      case 'create': {
        const bob = await send(method, await spec.call(ctx), tokens.bob);
        expect(bob.status).toBe(201);
        expect(bob.body).toMatchObject({ [spec.ownerField ?? 'ownerId']: 'bob' });
        break;
      }
      case 'any':
        for (const token of [tokens.alice, tokens.admin]) {
          expect((await send(method, await spec.call(ctx), token)).status).toBe(spec.status);
        }
        break;
      case 'admin': {
        const user = await send(method, await spec.call(ctx), tokens.alice);
        expect(user.status).toBe(403);
        expect(user.body).toMatchObject({ code: 'FORBIDDEN' });
        expect((await send(method, await spec.call(ctx), tokens.admin)).status).toBe(spec.admin);
        break;
      }
    }
  });
});
