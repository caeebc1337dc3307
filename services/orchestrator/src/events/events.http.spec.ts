import type { FlowRun, StepType } from '@tda/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  publishStepEvent,
  simulateWorker,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';
import { openSse, type SseEvent, type SseTestStream } from '../testing/sse-test.client';
import { EventStreams } from './event-streams.service';

const TRIGGER = { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT', timeframes: ['1d'] } };

/** (type, step, status, attempt) of each event: what must never arrive twice. */
const transitions = (events: SseEvent[]): string[] =>
  events.map((e) =>
    [e.event, e.data['stepId'] ?? '-', e.data['status'], e.data['attempt'] ?? '-'].join(' '),
  );

describe('live events (SSE)', () => {
  let orc: TestOrchestrator;
  const streams: SseTestStream[] = [];
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await orc.close();
  });

  const open = async (path: string, token: string | null, lastEventId?: string) => {
    const stream = await openSse(`${orc.baseUrl}${path}`, {
      token,
      ...(lastEventId === undefined ? {} : { lastEventId }),
    });
    streams.push(stream);
    return stream;
  };
  const trigger = async (token: string): Promise<FlowRun> => {
    orc.clock.advance(1_000);
    const res = await orc.request('POST', '/runs', { body: TRIGGER, token });
    expect(res.status).toBe(201);
    return res.body as FlowRun;
  };
  /** Works the next READY step of the run like a worker, and reports it to the orchestrator. */
  const workNextStep = async (runId: string): Promise<boolean> => {
    const run = (await orc.store.get(runId))?.run;
    const ready = Object.entries(run?.steps ?? {}).find(([, s]) => s.status === 'READY');
    if (ready === undefined) return false;
    const [stepId, step] = ready;
    orc.clock.advance(1_000);
    const attempt = await simulateWorker(orc.store, runId, stepId, orc.clock.now);
    await publishStepEvent(orc.broker, {
      runId,
      stepId,
      stepType: step.stepType as StepType,
      status: 'SUCCEEDED',
      attempt,
      at: orc.clock.now().toISOString(),
    });
    // The orchestrator advances on the event: the next step becomes READY or the run ends.
    await expect
      .poll(async () => {
        const now = (await orc.store.get(runId))?.run;
        return (
          now?.status !== 'RUNNING' || Object.values(now.steps).some((s) => s.status === 'READY')
        );
      })
      .toBe(true);
    return true;
  };
  const finish = async (runId: string): Promise<void> => {
    while (await workNextStep(runId));
    await expect.poll(async () => (await orc.store.get(runId))?.run.status).toBe('SUCCEEDED');
  };

  it('streams a run from its current state to its end, each event with an id, then closes', async () => {
    orc = await startTestOrchestrator();
    const alice = await orc.tokenFor('alice');
    const run = await trigger(alice);
    const stream = await open(`/runs/${run.runId}/events`, alice);
    expect(stream.status).toBe(200);
    await stream.waitFor((e) => e.some((x) => x.event === 'run.step.changed'));
    expect(stream.events[0]).toMatchObject({
      event: 'run.status.changed',
      data: { status: 'RUNNING', previousStatus: null },
    });
    await finish(run.runId);
    await stream.ended;
    const final = stream.events.at(-1);
    expect(final).toMatchObject({
      event: 'run.status.changed',
      data: { status: 'SUCCEEDED', previousStatus: 'RUNNING' },
    });
    for (const stepId of Object.keys(run.steps)) {
      expect(stream.events).toContainEqual(
        expect.objectContaining({
          event: 'run.step.completed',
          data: expect.objectContaining({ stepId, status: 'SUCCEEDED' }) as unknown,
        }),
      );
    }
    expect(stream.events.every((e) => typeof e.id === 'string' && e.id.length > 0)).toBe(true);
    expect(new Set(transitions(stream.events)).size).toBe(stream.events.length);
    expect(stream.raw()).toMatch(/^retry: 3000\n\n/);
  });

  it('resumes by Last-Event-ID: nothing missed, nothing twice', async () => {
    orc = await startTestOrchestrator();
    const alice = await orc.tokenFor('alice');
    const run = await trigger(alice);
    const first = await open(`/runs/${run.runId}/events`, alice);
    await first.waitFor((e) => e.length >= 2);
    first.close();
    const seen = first.events.slice();
    const lastId = seen.at(-1)?.id ?? '';
    await workNextStep(run.runId); // progress while the client is away
    const second = await open(`/runs/${run.runId}/events`, alice, lastId);
    await second.waitFor((e) => e.length > 0);
    await finish(run.runId);
    await second.ended;
    const all = [...seen, ...second.events];
    expect(new Set(transitions(all)).size).toBe(all.length);
    const last = new Map<string, unknown>();
    for (const e of all)
      if (typeof e.data['stepId'] === 'string') last.set(e.data['stepId'], e.data['status']);
    expect(Object.fromEntries(last)).toEqual(
      Object.fromEntries(Object.keys(run.steps).map((id) => [id, 'SUCCEEDED'])),
    );
    expect(all.at(-1)?.data['status']).toBe('SUCCEEDED');
  });

  it("is owner-isolated: another owner's run is a 404, no credential a 401, a foreign id a 400", async () => {
    orc = await startTestOrchestrator();
    const alice = await orc.tokenFor('alice');
    const bob = await orc.tokenFor('bob');
    const run = await trigger(alice);
    expect((await open(`/runs/${run.runId}/events`, bob)).status).toBe(404);
    expect((await open(`/runs/${run.runId}/events`, null)).status).toBe(401);
    expect((await open('/events/stream', null)).status).toBe(401);
    const foreign = await open(`/runs/${run.runId}/events`, alice, 'g1.e30');
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 'INVALID_REQUEST' });

    const bobs = await open('/events/stream', bob);
    const alices = await open('/events/stream', alice);
    await new Promise((r) => setTimeout(r, 50));
    const second = await trigger(alice);
    await alices.waitFor((e) => e.some((x) => x.event === 'run.created'));
    expect(alices.events[0]).toMatchObject({
      event: 'run.created',
      data: { runId: second.runId, ownerId: 'alice' },
    });
    await workNextStep(second.runId);
    await alices.waitFor((e) => e.some((x) => x.event === 'run.step.completed'));
    expect(bobs.events).toEqual([]);
  });

  it('resumes the owner stream from its cursor without repeating what it sent', async () => {
    orc = await startTestOrchestrator();
    const alice = await orc.tokenFor('alice');
    const stream = await open('/events/stream', alice);
    await new Promise((r) => setTimeout(r, 50));
    const run = await trigger(alice);
    await stream.waitFor((e) => e.some((x) => x.event === 'run.step.changed'));
    stream.close();
    const cursor = stream.events.at(-1)?.id ?? '';
    await workNextStep(run.runId);
    const resumed = await open('/events/stream', alice, cursor);
    await resumed.waitFor((e) => e.some((x) => x.event === 'run.step.completed'));
    const all = [...stream.events, ...resumed.events];
    expect(new Set(transitions(all)).size).toBe(all.length);
    expect(resumed.events.some((e) => e.event === 'run.created')).toBe(false);
  });

  it('bounds open streams per owner (429), frees a slot on close, and sends heartbeats', async () => {
    orc = await startTestOrchestrator({
      env: { TDA_SSE_MAX_STREAMS_PER_OWNER: '2', TDA_SSE_HEARTBEAT_MS: '1000' },
    });
    const alice = await orc.tokenFor('alice');
    const bob = await orc.tokenFor('bob');
    const a1 = await open('/events/stream', alice);
    await open('/events/stream', alice);
    const refused = await open('/events/stream', alice);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { ownerId: 'alice', limit: 2 },
    });
    expect((await open('/events/stream', bob)).status).toBe(200);
    a1.close();
    await expect.poll(() => orc.logs.withEvent('event_stream_closed').length).toBe(1);
    expect((await open('/events/stream', alice)).status).toBe(200);
    expect(orc.logs.withEvent('event_stream_refused')).toHaveLength(1);
    const beat = await open('/events/stream', bob);
    await expect.poll(() => beat.raw(), { timeout: 5_000 }).toContain(': heartbeat');
  });

  it('ends streams after TDA_SSE_MAX_STREAM_SECONDS and on shutdown, so clients reconnect', async () => {
    orc = await startTestOrchestrator({ env: { TDA_SSE_MAX_STREAM_SECONDS: '1' } });
    const alice = await orc.tokenFor('alice');
    const timed = await open('/events/stream', alice);
    await timed.ended;
    expect(orc.logs.withEvent('event_stream_closed').at(-1)).toMatchObject({
      reason: 'max_duration',
    });
    const other = await startTestOrchestrator({ identities: orc.identities });
    const held = await openSse(`${other.baseUrl}/events/stream`, { token: alice });
    await other.close();
    await held.ended;
    expect(other.logs.withEvent('event_stream_closed').at(-1)).toMatchObject({
      reason: 'shutdown',
    });
  });
  it('refuses a stream opened while shutting down (it would hold the HTTP server open)', async () => {
    orc = await startTestOrchestrator();
    const alice = await orc.tokenFor('alice');
    orc.app.get(EventStreams).beforeApplicationShutdown();
    const res = await orc.request('GET', '/events/stream', { token: alice });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
  });
});
