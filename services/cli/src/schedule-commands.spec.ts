import type { FlowScheduleRequest, Signal } from '@tda/contracts';
import { makeFlowRun, makeSignal, makeStoredSchedule, scheduleIdOf } from '@tda/flow-store/testing';
import { cliRunner, TEST_TOKEN } from './testing/cli-runner';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScheduleView } from './api-client';
import { renderSchedule, slotText } from './schedule-commands';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

const TOKEN = TEST_TOKEN;
const NEXT = [
  '2026-09-21T07:00:00.000Z',
  '2026-09-22T07:00:00.000Z',
  '2026-09-23T07:00:00.000Z',
  '2026-09-24T07:00:00.000Z',
  '2026-09-25T07:00:00.000Z',
];
const run = makeFlowRun({ status: 'SUCCEEDED', suffix: 'sched' });

const notFound = (id: string): FakeApiAnswer => ({
  status: 404,
  body: { code: 'NOT_FOUND', message: `schedule '${id}' not found` },
});

/** The schedules and signals routes as the orchestrator answers them, for one owner. */
class FakeSchedules {
  readonly schedules = new Map<string, ScheduleView>();
  readonly fired = new Set<string>();
  signals: Signal[] = [];
  private counter = 0;

  reset(): void {
    this.schedules.clear();
    this.fired.clear();
    this.signals = [];
    this.counter = 0;
  }

  route = ({ method, url, body }: FakeApiRequest): FakeApiAnswer => {
    const [path = '', query = ''] = url.split('?');
    if (method === 'GET' && path === `/runs/${run.runId}`) return { status: 200, body: run };
    if (method === 'GET' && path === '/signals')
      return this.listSignals(new URLSearchParams(query));
    if (method === 'POST' && path === '/schedules')
      return this.create(JSON.parse(body) as FlowScheduleRequest);
    if (method === 'GET' && path === '/schedules') {
      return { status: 200, body: { schedules: [...this.schedules.values()], nextCursor: null } };
    }
    const [, , id = '', action] = path.split('/');
    const found = this.schedules.get(id);
    if (found === undefined || !path.startsWith('/schedules/')) return notFound(id);
    if (method === 'GET' && action === undefined) return { status: 200, body: found };
    if (method === 'DELETE') {
      this.schedules.delete(id);
      return { status: 204, body: undefined };
    }
    if (action === 'pause' || action === 'resume') {
      const enabled = action === 'resume';
      const changed: ScheduleView = { ...found, enabled, nextFireTimes: enabled ? NEXT : [] };
      this.schedules.set(id, changed);
      return { status: 200, body: changed };
    }
    if (action === 'fire')
      return this.fire(id, JSON.parse(body === '' ? '{}' : body) as { slotAt?: string });
    return notFound(id);
  };

  private create(request: FlowScheduleRequest): FakeApiAnswer {
    if (request.flowKey === 'nope_v1') {
      return {
        status: 400,
        body: { code: 'INVALID_REQUEST', message: "unknown flowKey 'nope_v1'" },
      };
    }
    this.counter += 1;
    const {
      enabled = true,
      timeZone = 'UTC',
      catchUp = 'skip',
      overlap = 'skip',
      ...rest
    } = request;
    const view: ScheduleView = {
      ...makeStoredSchedule(this.counter, { ...rest, enabled, timeZone, catchUp, overlap }),
      nextFireTimes: enabled ? NEXT : [],
    };
    if (!enabled) delete view.nextSlotAt;
    this.schedules.set(view.scheduleId, view);
    return { status: 201, body: view };
  }

  private fire(scheduleId: string, body: { slotAt?: string }): FakeApiAnswer {
    const slotAt = body.slotAt ?? '2026-09-20T10:31:00.000Z';
    const created = !this.fired.has(slotAt);
    this.fired.add(slotAt);
    return { status: created ? 201 : 200, body: { scheduleId, slotAt, runId: run.runId, created } };
  }

  private listSignals(query: URLSearchParams): FakeApiAnswer {
    const symbol = query.get('symbol');
    const limit = Number(query.get('limit') ?? '20');
    const matching = this.signals.filter(
      (s) => symbol === null || s.symbolKey === symbol.replace(/[/-]/g, '').toUpperCase(),
    );
    return {
      status: 200,
      body: {
        signals: matching.slice(0, limit),
        nextCursor: matching.length > limit ? 'c-2' : null,
      },
    };
  }
}

describe('tda schedule / tda signals', () => {
  let api: FakeApiServer;
  const fake = new FakeSchedules();
  const cli = cliRunner(() => api.baseUrl, { watchIntervalMs: 10 });
  const create = (...extra: string[]) =>
    cli(
      'schedule',
      'create',
      'recommendation_with_account_v1',
      '-s',
      'BTC-USDT',
      '--cron',
      '0 8 * * *',
      ...extra,
    );

  beforeAll(async () => {
    api = await startFakeApiServer(fake.route);
  });
  afterAll(() => api.close());
  beforeEach(() => {
    fake.reset();
    api.requests.length = 0;
  });

  it('create sends every flag as the request and prints the schedule with its next fire times', async () => {
    const result = await create(
      '--tz',
      'Europe/London',
      '-a',
      'demo',
      '-t',
      '1d, 4h',
      '--min-signal',
      '0.7',
      '--catch-up',
      'latest',
      '--overlap',
      'allow',
      '--description',
      'London open',
    );
    expect(result).toMatchObject({ code: 0, err: '' });
    const post = api.requests[0];
    expect(post?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(post?.body ?? '{}')).toEqual({
      flowKey: 'recommendation_with_account_v1',
      scope: { symbol: 'BTC-USDT', accountId: 'demo', timeframes: ['1d', '4h'] },
      cron: '0 8 * * *',
      timeZone: 'Europe/London',
      catchUp: 'latest',
      overlap: 'allow',
      minSignalStrength: 0.7,
      description: 'London open',
    });
    expect(result.out).toContain(`created ${scheduleIdOf(1)}`);
    expect(result.out).toContain('cron        0 8 * * *  (Europe/London)');
    expect(result.out).toContain('policies    catch-up latest, overlap allow');
    expect(result.out).toContain('signals     signal_strength >= 0.7');
    // The instant in UTC and the wall time the cron is read in (BST: UTC+1).
    expect(result.out).toContain('next fires  2026-09-21 07:00Z (2026-09-21 08:00 Europe/London)');
    expect(result.out).toContain('            2026-09-25 07:00Z (2026-09-25 08:00 Europe/London)');
  });

  it('create --paused sends enabled false and a minimal request otherwise', async () => {
    const result = await create('--paused');
    expect(JSON.parse(api.requests[0]?.body ?? '{}')).toEqual({
      flowKey: 'recommendation_with_account_v1',
      scope: { symbol: 'BTC-USDT' },
      cron: '0 8 * * *',
      enabled: false,
    });
    expect(result.out).toContain('(paused)');
    expect(result.out).toContain('next fires  none while paused');
    expect(result.out).toContain('signals     none (no minimum signal strength)');
  });

  it.each([
    [['--cron', '0 8 * *'], /--cron must be 5 fields/],
    [['--tz', 'Mars/Olympus'], /--tz must be an IANA time zone.*Mars\/Olympus/],
    [['--min-signal', '1.5'], /--min-signal must be a number in 0\.\.1, got '1\.5'/],
    [['--min-signal', ''], /--min-signal must be a number in 0\.\.1/],
    [['--catch-up', 'all'], /--catch-up must be skip or latest, got 'all'/],
    [['--overlap', 'queue'], /--overlap must be skip or allow, got 'queue'/],
    [['--description', 'x'.repeat(201)], /--description must be at most 200 characters/],
  ])('create refuses %j before calling the API', async (flags, message) => {
    const result = await cli(
      'schedule',
      'create',
      'recommendation_with_account_v1',
      '-s',
      'BTC-USDT',
      '--cron',
      '0 8 * * *',
      ...flags,
    );
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^error INVALID_REQUEST: /);
    expect(result.err).toMatch(message);
    expect(api.requests).toEqual([]);
  });

  it('create prints the API refusal (400) with its code', async () => {
    const result = await cli(
      'schedule',
      'create',
      'nope_v1',
      '-s',
      'BTC-USDT',
      '--cron',
      '* * * * *',
    );
    expect(result.code).toBe(1);
    expect(result.err).toContain("error INVALID_REQUEST (HTTP 400): unknown flowKey 'nope_v1'");
  });

  it('list prints one row per schedule; --json prints the page', async () => {
    await create('--min-signal', '0.6');
    await create('--paused');
    const first = fake.schedules.get(scheduleIdOf(1));
    if (first === undefined) throw new Error('not created');
    fake.schedules.set(first.scheduleId, {
      ...first,
      lastFire: {
        slotAt: '2026-09-20T08:00:00.000Z',
        outcome: 'fired',
        runId: run.runId,
        at: '2026-09-20T08:00:05.000Z',
      },
    });
    const list = await cli('schedule', 'list');
    expect(list.code).toBe(0);
    expect(api.requests.at(-1)?.url).toBe('/schedules?limit=20');
    expect(list.out.split('\n').slice(0, 3)).toEqual([
      'ID                        FLOW                            SYMBOL    CRON       TZ   ENABLED  NEXT               LAST FIRE                MIN SIGNAL',
      `${scheduleIdOf(1)}  recommendation_with_account_v1  BTC-USDT  0 8 * * *  UTC  yes      2026-09-21 07:00Z  fired 2026-09-20 08:00Z  0.6`,
      `${scheduleIdOf(2)}  recommendation_with_account_v1  BTC-USDT  0 8 * * *  UTC  paused   —                  —                        —`,
    ]);
    const json = await cli('schedule', 'list', '--json', '--limit', '5');
    expect(api.requests.at(-1)?.url).toBe('/schedules?limit=5');
    expect(JSON.parse(json.out)).toMatchObject({ nextCursor: null, schedules: [{}, {}] });
    expect((await cli('schedule', 'list', '--limit', '0')).err).toMatch(
      /--limit must be an integer in 1\.\.100/,
    );
  });

  it('show prints every field, the last fire and the next 5 fire times', async () => {
    await create('--min-signal', '0.6', '-a', 'demo');
    const id = scheduleIdOf(1);
    const stored = fake.schedules.get(id);
    if (stored === undefined) throw new Error('not created');
    fake.schedules.set(id, {
      ...stored,
      lastFire: {
        slotAt: '2026-09-20T08:00:00.000Z',
        outcome: 'skipped_overlap',
        at: '2026-09-20T08:00:05.000Z',
        missedCount: 2,
        reason: 'the previous run is still RUNNING',
      },
    });
    const show = await cli('schedule', 'show', id);
    expect(show.code).toBe(0);
    expect(api.requests.at(-1)?.url).toBe(`/schedules/${id}`);
    expect(show.out).toContain(`${id}  recommendation_with_account_v1  BTC-USDT  (enabled)`);
    expect(show.out).toContain('scope       symbol BTC-USDT, accountId demo');
    expect(show.out).toContain('last fire   skipped_overlap slot 2026-09-20 08:00Z');
    expect(show.out).toContain('decided 2026-09-20 08:00Z, 2 older slot(s) missed');
    expect(show.out).toContain('reason: the previous run is still RUNNING');
    expect(show.out.match(/2026-09-2\d 07:00Z/g)).toHaveLength(5);
    const json = await cli('schedule', 'show', id, '--json');
    expect(JSON.parse(json.out)).toMatchObject({ scheduleId: id, nextFireTimes: NEXT });
  });

  it('pause, resume and delete call their routes; a missing schedule is a clear NOT_FOUND', async () => {
    await create();
    const id = scheduleIdOf(1);
    expect((await cli('schedule', 'pause', id)).out).toBe(`${id} paused\n`);
    expect(api.requests.at(-1)).toMatchObject({ method: 'POST', url: `/schedules/${id}/pause` });
    expect((await cli('schedule', 'resume', id)).out).toBe(
      `${id} enabled; next fire 2026-09-21 07:00Z\n`,
    );
    expect(api.requests.at(-1)).toMatchObject({ method: 'POST', url: `/schedules/${id}/resume` });
    expect((await cli('schedule', 'delete', id)).out).toBe(`deleted ${id}\n`);
    expect(api.requests.at(-1)).toMatchObject({ method: 'DELETE', url: `/schedules/${id}` });
    for (const command of ['show', 'pause', 'resume', 'delete', 'fire']) {
      const missing = await cli('schedule', command, id);
      expect(missing.code).toBe(1);
      expect(missing.err).toBe(
        `error NOT_FOUND (HTTP 404): no schedule ${id} of yours (deleted, another owner's, or never created; see tda schedule list)\n`,
      );
    }
  });

  it('refuses what is not a schedule id without calling the API', async () => {
    const result = await cli('schedule', 'show', 'daily');
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/error INVALID_REQUEST: 'daily' is not a schedule id/);
    expect(api.requests).toEqual([]);
  });

  it('fire prints the run; the same slot again is its existing run; --slot is sent as UTC', async () => {
    await create();
    const id = scheduleIdOf(1);
    const first = await cli('schedule', 'fire', id);
    expect(first.out).toBe(`fired ${id} slot 2026-09-20 10:31Z: run ${run.runId}\n`);
    expect(api.requests.at(-1)).toMatchObject({
      method: 'POST',
      url: `/schedules/${id}/fire`,
      body: '{}',
    });
    const again = await cli('schedule', 'fire', id);
    expect(again.out).toBe(
      `slot 2026-09-20 10:31Z of ${id} had been fired before: run ${run.runId}\n`,
    );
    const backfill = await cli(
      'schedule',
      'fire',
      id,
      '--slot',
      '2026-09-20T09:00:00+01:00',
      '--json',
    );
    expect(JSON.parse(api.requests.at(-1)?.body ?? '{}')).toEqual({
      slotAt: '2026-09-20T08:00:00Z',
    });
    expect(JSON.parse(backfill.out)).toMatchObject({
      slotAt: '2026-09-20T08:00:00Z',
      created: true,
    });
    const bad = await cli('schedule', 'fire', id, '--slot', 'yesterday');
    expect(bad.err).toMatch(/--slot must be an RFC 3339 time/);
  });

  it('fire --watch follows the run to its end like tda run --watch', async () => {
    await create();
    const result = await cli('schedule', 'fire', scheduleIdOf(1), '--watch');
    expect(result.code).toBe(0);
    expect(result.out).toContain(`: run ${run.runId}`);
    expect(result.out).toContain('SUCCEEDED');
    expect(api.requests.some((r) => r.url === `/runs/${run.runId}`)).toBe(true);
  });

  it('signals prints a table, filters by symbol and pages', async () => {
    fake.signals = [
      makeSignal({
        scheduleId: scheduleIdOf(1),
        slotAt: '2026-09-20T08:00:00.000Z',
        signal_strength: 0.82,
        minSignalStrength: 0.7,
        createdAt: '2026-09-20T08:04:10.000Z',
      }),
      makeSignal({
        scheduleId: scheduleIdOf(2),
        symbol: 'ETH-USDT',
        symbolKey: 'ETHUSDT',
        action: 'SELL',
        headline: 'Lower high\u001b[31m under resistance',
      }),
    ];
    const all = await cli('signals');
    expect(all.code).toBe(0);
    const lines = all.out.split('\n');
    expect(lines[0]).toMatch(
      /^TIME\s+SYMBOL\s+ACTION\s+STRENGTH\s+MIN\s+SCHEDULE\s+RUN\s+HEADLINE$/,
    );
    expect(lines[1]).toMatch(
      new RegExp(
        `^2026-09-20 08:04Z\\s+BTC-USDT\\s+BUY\\s+0\\.82\\s+0\\.70\\s+${scheduleIdOf(1)}\\s+\\S+\\s+Daily uptrend`,
      ),
    );
    // Model text reaches the terminal without escape sequences.
    expect(lines[2]).toContain('Lower high[31m under resistance');
    const eth = await cli('signals', '--symbol', 'eth/usdt', '--limit', '1');
    expect(api.requests.at(-1)?.url).toBe('/signals?symbol=eth%2Fusdt&limit=1');
    expect(eth.out).toContain('ETH-USDT');
    expect(eth.out.split('\n').filter((l) => l.includes('USDT'))).toHaveLength(1);
    const paged = await cli('signals', '--limit', '1');
    expect(paged.out).toContain('next page: tda signals --limit 1 --cursor c-2');
    expect((await cli('signals', '--limit', 'x')).err).toMatch(/--limit must be an integer/);
    fake.signals = [];
    expect((await cli('signals')).out).toBe('no signals\n');
  });
});

describe('schedule rendering', () => {
  it('shows the wall time of the schedule’s zone next to the UTC instant (DST aware)', () => {
    expect(slotText('2026-01-15T08:00:00.000Z', 'Europe/London')).toBe(
      '2026-01-15 08:00Z (2026-01-15 08:00 Europe/London)',
    );
    expect(slotText('2026-07-15T07:00:00.000Z', 'Europe/London')).toBe(
      '2026-07-15 07:00Z (2026-07-15 08:00 Europe/London)',
    );
    expect(slotText('2026-07-15T07:00:00.000Z', 'UTC')).toBe('2026-07-15 07:00Z');
  });

  it('a schedule without nextFireTimes (a list entry) shows its nextSlotAt', () => {
    const text = renderSchedule(makeStoredSchedule(3, { nextSlotAt: '2026-03-01T00:05:00.000Z' }));
    expect(text).toContain('next fires  2026-03-01 00:05Z');
    expect(text).toContain('last fire   none yet');
  });
});
