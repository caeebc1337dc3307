import type { EvaluationView } from '@tda/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderEvaluationTable } from './evaluate-commands';
import { cliRunner } from './testing/cli-runner';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

const ID = 'evl_aaaaaaaaaaaaaaaaaaaa';
const ROW = {
  provider: 'offline',
  modelName: 'rules-v1',
  promptId: 'prompt_reco_v1',
  count: 3,
  pending: 0,
  noTrade: 1,
  trades: 2,
  hitRatePct: 50,
  meanReturnPct: 1.25,
  medianReturnPct: 1.25,
  meanMaePct: -2.5,
  buyAndHoldMeanPct: 0.75,
  excessVsBuyAndHoldPct: 0.5,
};

function view(overrides: Partial<EvaluationView> = {}): EvaluationView {
  return {
    evaluationId: ID,
    ownerId: 'owner-1',
    state: 'running',
    symbol: 'BTC-USDT',
    from: '2026-08-01T00:00:00Z',
    to: '2026-08-15T00:00:00Z',
    every: '1w',
    costs: { feeBps: 10, slippageBps: 0 },
    window: 2,
    createdAt: '2026-11-26T00:00:00.000Z',
    counts: { points: 3, triggered: 2, active: 2, succeeded: 0, failed: 0, cancelled: 0 },
    items: [],
    table: [],
    ...overrides,
  };
}

const DONE = view({
  state: 'completed',
  counts: { points: 3, triggered: 3, active: 0, succeeded: 3, failed: 0, cancelled: 0 },
  items: [
    {
      asOf: '2026-08-01T00:00:00Z',
      runId: '20261126-000000_BTC-USDT_r1',
      runStatus: 'SUCCEEDED',
      recommendations: [
        {
          stepId: 'llm_reco:prompt_reco_v1:model_x',
          provider: 'offline',
          modelName: 'rules-v1',
          promptId: 'prompt_reco_v1',
          action: 'BUY',
          horizonDays: 4,
          score: {
            status: 'scored',
            direction: 'long',
            hit: true,
            returnPct: 3.5,
            maePct: -1.2,
            buyAndHoldPct: 4,
            exitReason: 'take_profit',
          },
        },
      ],
    },
  ],
  table: [ROW],
});

describe('tda evaluate', () => {
  let api: FakeApiServer;
  const requests: { method: string; path: string; body: string }[] = [];
  let polls: EvaluationView[] = [];
  const route = ({ method, url, body }: FakeApiRequest): FakeApiAnswer => {
    const path = url.split('?')[0] ?? '';
    requests.push({ method, path, body });
    if (method === 'POST' && path === '/evaluations/recommendations') {
      return { status: 201, body: view() };
    }
    if (method === 'GET' && path === `/evaluations/${ID}`) {
      return { status: 200, body: polls.shift() ?? DONE };
    }
    if (method === 'POST' && path === `/evaluations/${ID}/cancel`) {
      return {
        status: 200,
        body: view({ state: 'cancelled', cancelRequestedAt: '2026-11-26T00:01:00Z' }),
      };
    }
    if (method === 'GET' && path === '/evaluations') {
      return { status: 200, body: { items: [], nextCursor: null } };
    }
    return { status: 404, body: { code: 'NOT_FOUND', message: `no ${path}` } };
  };
  const cli = cliRunner(() => api.baseUrl, { watchIntervalMs: 5 });

  beforeAll(async () => {
    api = await startFakeApiServer(route);
  });
  afterAll(async () => {
    await api.close();
  });
  beforeEach(() => {
    requests.length = 0;
    polls = [];
  });

  it('creates an evaluation with the flags as the request, then watches it to the table', async () => {
    polls = [view(), view({ counts: { ...view().counts, active: 1, succeeded: 1, triggered: 3 } })];
    const result = await cli(
      'evaluate',
      'recommendations',
      'BTC-USDT',
      '--from',
      '2026-08-01T00:00:00Z',
      '--to',
      '2026-08-15T00:00:00.000Z',
      '--every',
      '1w',
      '--window',
      '3',
      '--fee-bps',
      '5',
      '--watch',
    );
    expect(result.code).toBe(0);
    const created = requests.find((r) => r.method === 'POST');
    expect(JSON.parse(created?.body ?? '{}')).toEqual({
      symbol: 'BTC-USDT',
      from: '2026-08-01T00:00:00Z',
      to: '2026-08-15T00:00:00Z',
      every: '1w',
      accountId: 'demo',
      window: 3,
      feeBps: 5,
    });
    expect(result.out).toContain(`created evaluation ${ID}`);
    expect(result.out).toContain('running: 3 points, 3 started, 1 active, 1 succeeded');
    expect(result.out).toContain('completed: 3 points');
    expect(result.out).toMatch(
      /2026-08-01T00:00:00Z\s+SUCCEEDED\s+BUY\s+scored\s+yes\s+\+3\.50%\s+-1\.20%\s+take_profit/,
    );
    expect(result.out).toMatch(/offline\s+rules-v1\s+prompt_reco_v1\s+3\s+2\s+50\.0%\s+\+1\.25%/);
  });

  it('exits 1 when the watched evaluation ends cancelled', async () => {
    polls = [view({ state: 'cancelled' })];
    const result = await cli(
      'evaluate',
      'recommendations',
      'BTC-USDT',
      '--from',
      '2026-08-01T00:00:00Z',
      '--to',
      '2026-08-15T00:00:00Z',
      '--every',
      '1w',
      '--watch',
    );
    expect(result.code).toBe(1);
  });

  it.each([
    [['--every', 'weekly'], '--every must be'],
    [['--every', '1w', '--window', '11'], '--window must be'],
    [['--every', '1w', '--fee-bps', '-1'], '--fee-bps must be'],
    [['--every', '1w', '--from', 'yesterday'], '--as-of must be'],
  ])('refuses %j before any request', async (flags, message) => {
    const base = ['--from', '2026-08-01T00:00:00Z', '--to', '2026-08-15T00:00:00Z'];
    const result = await cli('evaluate', 'recommendations', 'BTC-USDT', ...base, ...flags);
    expect(result.code).not.toBe(0);
    expect(result.err).toContain(message);
    expect(requests).toEqual([]);
  });

  it('show --points, list and cancel', async () => {
    const shown = await cli('evaluate', 'show', ID, '--points');
    expect(shown.out).toContain('window 2, costs 10 bps fee + 0 bps slippage per side');
    expect(shown.out).toContain('take_profit');
    expect((await cli('evaluate', 'list')).out).toContain('ID');
    const cancelled = await cli('evaluate', 'cancel', ID);
    expect(cancelled.out).toContain(`${ID} cancelled:`);
  });

  it('renders an empty table as a sentence and nulls as dashes', () => {
    expect(renderEvaluationTable([])).toBe('(no recommendation scored yet)');
    const row = { ...ROW, hitRatePct: null, meanReturnPct: null, trades: 0 };
    expect(renderEvaluationTable([row])).toMatch(/0\s+—\s+—/);
  });
});
