import type { BacktestJob, BacktestTop, BacktestTopItem } from '@tda/contracts';
import { cliRunner, TEST_TOKEN } from './testing/cli-runner';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  parseExecution,
  parseParams,
  remember,
  renderStages,
  shortVariantKeys,
  type StageMemory,
} from './backtest-commands';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

const TOKEN = TEST_TOKEN;
const JOB_ID = '20260920-103000_BTC-USDT_bt1';
const HASHES = {
  request_hash: 'a'.repeat(64),
  engine_params_hash: 'b'.repeat(64),
  backtest_runtime_config_hash: 'c'.repeat(64),
};

function makeJob(overrides: Partial<BacktestJob> = {}): BacktestJob {
  return {
    job_id: JOB_ID,
    owner_id: 'owner-1',
    state: 'queued',
    symbol: 'BTC-USDT',
    timeframe: '1h',
    request: {},
    hashes: HASHES,
    created_at: '2026-09-20T10:30:00.000Z',
    ...overrides,
  };
}

const at = '2026-09-20T10:31:00.000Z';
const progress = (
  stage: 'stage_a' | 'stage_b' | 'finalizing',
  processed: number,
  total: number,
): Pick<BacktestJob, 'state' | 'stage' | 'progress'> => ({
  state: 'running',
  stage,
  progress: { stage, processed_units: processed, total_units: total, updated_at: at },
});

const EXEC = 'fraction=1,feeBps=10,slippageBps=5,takeProfitPct=0,trailingStopPct=0';
function item(rank: number, fast: number, stop: number, ret: number): BacktestTopItem {
  return {
    rank,
    variant_key: `ma_cross:ema:fast=${fast},slow=50|direction=long_only,${EXEC.replace('takeProfitPct', `stopLossPct=${stop},takeProfitPct`)}`,
    base_variant_key: `ma_cross:ema:fast=${fast},slow=50`,
    strategy: { kind: 'ma_cross', ma: 'ema', fast, slow: 50 },
    execution: {
      direction: 'long_only',
      fraction: 1,
      feeBps: 10,
      slippageBps: 5,
      stopLossPct: stop,
      takeProfitPct: 0,
      trailingStopPct: 0,
    },
    metrics: {
      total_return_pct: ret,
      trades: 12 + rank,
      max_drawdown_pct: 8.5,
      sharpe: 1.234,
      win_rate_pct: 60,
      profit_factor: 1.5,
      exposure_pct: 40,
    },
  };
}

const RESULT: BacktestTop = {
  job_id: JOB_ID,
  state: 'succeeded',
  source: 'result',
  items: [
    {
      ...item(1, 10, 2, 42.1),
      report_table_md: '| metric | value |\n| --- | --- |\n| return | 42.10% |\n',
      trades: [
        {
          side: 'long',
          entryTime: '2026-09-01T00:00:00.000Z',
          entryPrice: 100,
          exitTime: '2026-09-02T00:00:00.000Z',
          exitPrice: 110,
          pnl: 0.0987,
          reason: 'signal',
        },
      ],
    },
    { ...item(2, 5, 0, 30), report_table_md: '| metric | value |\n', trades: [] },
  ],
};

/** The /backtests/jobs routes: GET of the job answers the scripted states one per poll. */
class FakeBacktests {
  script: BacktestJob[] = [];
  polls = 0;
  top: BacktestTop = RESULT;
  keys = new Set<string>();
  jobs: BacktestJob[] = [];

  reset(): void {
    this.script = [makeJob()];
    this.polls = 0;
    this.top = RESULT;
    this.keys.clear();
    this.jobs = [];
  }

  route = ({ method, url, body }: FakeApiRequest): FakeApiAnswer => {
    const [path = '', query = ''] = url.split('?');
    if (method === 'POST' && path === '/backtests/jobs') return this.create(body);
    if (method === 'GET' && path === '/backtests/jobs') return this.list(query);
    if (method === 'GET' && path === `/backtests/jobs/${JOB_ID}`) {
      const job = this.script[Math.min(this.polls, this.script.length - 1)];
      this.polls += 1;
      return { status: 200, body: job };
    }
    if (method === 'GET' && path === `/backtests/jobs/${JOB_ID}/top`) {
      const limit = Number(new URLSearchParams(query).get('limit') ?? '1000');
      return { status: 200, body: { ...this.top, items: this.top.items.slice(0, limit) } };
    }
    if (method === 'POST' && path === `/backtests/jobs/${JOB_ID}/cancel`) {
      return {
        status: 200,
        body: makeJob({ ...progress('stage_b', 3, 9), cancel_requested_at: at }),
      };
    }
    return { status: 404, body: { code: 'NOT_FOUND', message: `no ${path}` } };
  };

  private create(raw: string): FakeApiAnswer {
    const request = JSON.parse(raw) as { symbol: string; idempotencyKey?: string };
    if (request.symbol === 'HUGE-USDT') {
      return {
        status: 422,
        body: {
          code: 'VALIDATION_FAILED',
          message: 'backtest grid request refused: variants above_limit; top_k above_limit',
          details: {
            violations: [
              { path: 'variants', problem: 'above_limit', limit: 600000, actual: 800000 },
              { path: 'top_k', problem: 'above_limit', limit: 100, actual: 500 },
              { path: 'strategy', problem: 'unknown_fields', values: ['foo'] },
            ],
          },
          retryable: false,
        },
      };
    }
    const repeated = request.idempotencyKey !== undefined && this.keys.has(request.idempotencyKey);
    if (request.idempotencyKey !== undefined) this.keys.add(request.idempotencyKey);
    return { status: repeated ? 200 : 201, body: makeJob() };
  }

  private list(query: string): FakeApiAnswer {
    const params = new URLSearchParams(query);
    const limit = Number(params.get('limit') ?? '20');
    const start = Number(params.get('cursor') ?? '0');
    const state = params.get('state');
    const matching = this.jobs.filter((j) => state === null || j.state === state);
    const next = start + limit < matching.length ? String(start + limit) : null;
    return {
      status: 200,
      body: { items: matching.slice(start, start + limit), next_cursor: next },
    };
  }
}

describe('tda backtest', () => {
  let api: FakeApiServer;
  const fake = new FakeBacktests();
  const cli = cliRunner(() => api.baseUrl, { watchIntervalMs: 5 });
  const run = (...extra: string[]) =>
    cli(
      'backtest',
      'run',
      'BTC-USDT',
      '--strategy',
      'ma_cross',
      '--param',
      'fast=5,10,20',
      '--param',
      'slow=50, 100',
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

  it('run sends every flag as the job request and prints the job with its hashes', async () => {
    const result = await run(
      '--ma',
      'ema',
      '-t',
      '4h',
      '--bars',
      '5000',
      '--as-of',
      '2026-09-20T00:00:00+02:00',
      '--exec',
      'stopLossPct=0,2,5',
      '--exec',
      'direction=long_only,long_short',
      '--exec',
      'feeBps=7.5',
      '--top-k',
      '20',
      '--preselect',
      '200',
      '--top-trades',
      '3',
      '-k',
      'idem-1',
    );
    expect(result).toMatchObject({ code: 0, err: '' });
    const post = api.requests[0];
    expect(post?.method).toBe('POST');
    expect(post?.url).toBe('/backtests/jobs');
    expect(post?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(post?.body ?? '{}')).toEqual({
      symbol: 'BTC-USDT',
      timeframe: '4h',
      asOf: '2026-09-19T22:00:00Z',
      bars: 5000,
      strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [5, 10, 20], slow: [50, 100] } },
      execution: {
        stopLossPct: [0, 2, 5],
        direction: ['long_only', 'long_short'],
        feeBps: [7.5],
      },
      top_k: 20,
      preselect: 200,
      top_trades_n: 3,
      idempotencyKey: 'idem-1',
    });
    expect(result.out).toContain(`created backtest job ${JOB_ID}`);
    expect(result.out).toContain(`request_hash                  ${HASHES.request_hash}`);
    expect(result.out).toContain(
      `backtest_runtime_config_hash  ${HASHES.backtest_runtime_config_hash}`,
    );
    expect(api.requests).toHaveLength(1);
  });

  it('run with a repeated idempotency key says it is the existing job; --json prints it raw', async () => {
    await run('-k', 'same');
    const again = await run('-k', 'same');
    expect(again.out).toContain(`existing backtest job (idempotency key) ${JOB_ID}`);
    const raw = await run('--json');
    expect(JSON.parse(raw.out)).toEqual(makeJob());
  });

  it.each([
    [['--param', 'fast'], "--param must be name=v1,v2,… (e.g. --param fast=5,10,20), got 'fast'"],
    [['--param', 'k=5,x'], "--param k: 'x' is not a number"],
    [['--param', 'k=5,,10'], "--param k: an empty value in 'k=5,,10'"],
    [['--param', 'fast=1'], '--param fast is given twice'],
    [['--exec', 'stopLoss=1'], '--exec stopLoss: unknown field'],
    [['--exec', 'direction=long'], "--exec direction: 'long' is not long_only or long_short"],
    [['--exec', 'feeBps=ten'], "--exec feeBps: 'ten' is not a number"],
    [['--bars', '50.5'], "--bars must be an integer in 1..9007199254740991, got '50.5'"],
    [['--ma', 'wma'], "--ma must be one of ema, sma, got 'wma'"],
    [['--as-of', 'yesterday'], '--as-of must be an RFC 3339 time'],
  ])('run %j is refused before any request', async (extra, message) => {
    const result = await run(...extra);
    expect(result.code).toBe(1);
    expect(result.err).toContain(message);
    expect(api.requests).toHaveLength(0);
  });

  it('run refuses an unknown strategy and a missing --param before any request', async () => {
    const kind = await cli(
      'backtest',
      'run',
      'BTC-USDT',
      '--strategy',
      'momentum',
      '--param',
      'a=1',
    );
    expect(kind.err).toContain(
      "--strategy must be one of ma_cross, rsi_reversion, bollinger_breakout, macd_cross, got 'momentum'",
    );
    const noParam = await cli('backtest', 'run', 'BTC-USDT', '--strategy', 'ma_cross');
    expect(noParam).toMatchObject({ code: 1 });
    expect(noParam.err).toContain('--param is required');
    expect(api.requests).toHaveLength(0);
  });

  it('a 422 prints every violation on its own line, exit 1', async () => {
    const result = await cli(
      'backtest',
      'run',
      'HUGE-USDT',
      '--strategy',
      'ma_cross',
      '--param',
      'fast=1',
    );
    expect(result.code).toBe(1);
    expect(result.out).toBe('');
    expect(result.err.split('\n')).toEqual([
      'error VALIDATION_FAILED (HTTP 422): the backtest request was refused',
      '  variants  above_limit  (limit 600000, actual 800000)',
      '  top_k  above_limit  (limit 100, actual 500)',
      '  strategy  unknown_fields  (values foo)',
      '',
    ]);
  });

  it('run --watch draws a bar per stage until the job succeeds, then the top table', async () => {
    fake.script = [
      makeJob(),
      makeJob(progress('stage_a', 0, 6)),
      makeJob(progress('stage_a', 3, 6)),
      makeJob(progress('stage_b', 12, 48)),
      makeJob(progress('finalizing', 0, 1)),
      makeJob({ state: 'succeeded', finished_at: at }),
    ];
    const result = await run('--watch');
    expect(result).toMatchObject({ code: 0, err: '' });
    const frames = result.out.split('\n\n');
    expect(frames[0]).toBe(
      `created ${JOB_ID}\n${JOB_ID}  queued\n${pending('stage_a')}\n${pending('stage_b')}\n${pending('finalizing')}`,
    );
    expect(result.out).toContain(`stage_a     [############------------]            3/6   50%`);
    expect(result.out).toContain(`stage_a     [########################]            6/6  100%`);
    expect(result.out).toContain(`stage_b     [######------------------]          12/48   25%`);
    expect(result.out).toContain(`${JOB_ID}  succeeded`);
    expect(result.out).toContain(`finalizing  [########################]            1/1  100%`);
    expect(fake.polls).toBe(6);
    expect(api.requests.at(-1)?.url).toBe(`/backtests/jobs/${JOB_ID}/top`);
    expect(result.out).toContain('RANK  VARIANT (ma_cross)                   RETURN %');
    expect(result.out).toMatch(
      /1\s+ema:fast=10,slow=50 \| stopLossPct=2\s+42\.10\s+8\.50\s+1\.23\s+60\.0\s+13/,
    );
    expect(result.out).toContain(
      'every variant: direction=long_only, fraction=1, feeBps=10, slippageBps=5, takeProfitPct=0, trailingStopPct=0',
    );
  });

  it('run --watch exits 1 when the job fails, printing its error and the last best so far', async () => {
    fake.script = [
      makeJob(progress('stage_b', 4, 8)),
      makeJob({ state: 'failed', stage: 'stage_b', last_error: 'candles unavailable' }),
    ];
    fake.top = {
      job_id: JOB_ID,
      state: 'failed',
      source: 'best_so_far',
      stage: 'stage_b',
      processed_units: 4,
      total_units: 8,
      items: [item(1, 5, 0, 3)],
    };
    const result = await run('--watch');
    expect(result.code).toBe(1);
    expect(result.out).toContain('error: candles unavailable');
    expect(result.out).toContain(`${JOB_ID}  failed  top: best so far (stage_b 4/8)`);
    expect(result.out).toContain('stage_b     [############------------]            4/8   50%');
  });

  it('run --watch --json prints nothing but {job, top} at the end; cancelled exits 1', async () => {
    fake.script = [makeJob(progress('stage_a', 1, 2)), makeJob({ state: 'cancelled' })];
    fake.top = { job_id: JOB_ID, state: 'cancelled', source: 'none', items: [] };
    const result = await run('--watch', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out)).toEqual({ job: makeJob({ state: 'cancelled' }), top: fake.top });
  });

  it('run --watch on a terminal redraws the stage bars in place', async () => {
    fake.script = [makeJob(progress('stage_a', 1, 2)), makeJob({ state: 'succeeded' })];
    const tty = cliRunner(() => api.baseUrl, { watchIntervalMs: 5, isTTY: true });
    const argv = ['backtest', 'run', 'BTC-USDT', '--strategy', 'ma_cross', '--param', 'fast=5'];
    const result = await tty(...argv, '--watch');
    expect(result.code).toBe(0);
    // 4 lines per frame (job line + 3 stages): the second frame moves up over the first.
    expect(result.out.split('\u001b[4F\u001b[0J')).toHaveLength(2);
  });

  it('show prints the job; --json the raw answer', async () => {
    fake.script = [makeJob({ ...progress('stage_b', 7, 9), as_of: at, started_at: at })];
    const result = await cli('backtest', 'show', JOB_ID);
    expect(result.out).toContain(`${JOB_ID}  running  BTC-USDT 1h  stage_b 7/9`);
    expect(result.out).toContain(
      'owner owner-1  created 2026-09-20 10:30:00Z  started 2026-09-20 10:31:00Z  finished —',
    );
    const raw = await cli('backtest', 'show', JOB_ID, '--json');
    expect(JSON.parse(raw.out)).toEqual(fake.script[0]);
  });

  it('top prints the table; --limit is sent; --report and --trades print the details', async () => {
    const plain = await cli('backtest', 'top', JOB_ID, '--limit', '1');
    expect(api.requests[0]?.url).toBe(`/backtests/jobs/${JOB_ID}/top?limit=1`);
    expect(plain.out).toContain(`${JOB_ID}  succeeded  top: result`);
    expect(plain.out).not.toContain('| metric');
    const full = await cli('backtest', 'top', JOB_ID, '--report', '--trades');
    expect(full.out).toContain(`#1 ${RESULT.items[0]?.variant_key}\n| metric | value |`);
    expect(full.out).toMatch(
      /long\s+2026-09-01 00:00:00Z\s+100\s+2026-09-02 00:00:00Z\s+110\s+0\.0987\s+signal/,
    );
    expect(full.out).toContain('no trades');
    const raw = await cli('backtest', 'top', JOB_ID, '--json');
    expect(JSON.parse(raw.out)).toEqual(RESULT);
  });

  it('list pages with the next cursor and the same filters', async () => {
    fake.jobs = [1, 2, 3].map((n) =>
      makeJob({ job_id: `20260920-10300${n}_BTC-USDT_bt${n}`, state: 'succeeded' }),
    );
    const first = await cli('backtest', 'list', '--state', 'succeeded', '--limit', '2');
    expect(api.requests[0]?.url).toBe('/backtests/jobs?state=succeeded&limit=2');
    expect(first.out).toContain('JOB');
    expect(first.out).toContain('20260920-103002_BTC-USDT_bt2  succeeded');
    expect(first.out).toContain(
      'next page: tda backtest list --state succeeded --limit 2 --cursor 2',
    );
    const second = await cli(
      'backtest',
      'list',
      '--state',
      'succeeded',
      '--limit',
      '2',
      '--cursor',
      '2',
    );
    expect(second.out).toContain('bt3');
    expect(second.out).not.toContain('next page');
    expect((await cli('backtest', 'list', '--state', 'queued')).out).toBe('no backtest jobs\n');
    expect((await cli('backtest', 'list', '--state', 'done')).err).toContain(
      '--state must be one of',
    );
  });

  it('cancel prints the job state and that it stops at a batch boundary', async () => {
    const result = await cli('backtest', 'cancel', JOB_ID);
    expect(api.requests[0]).toMatchObject({
      method: 'POST',
      url: `/backtests/jobs/${JOB_ID}/cancel`,
    });
    expect(result.out).toBe(`${JOB_ID} running (cancel requested; it stops at a batch boundary)\n`);
  });

  it('an unknown job is the API error', async () => {
    const result = await cli('backtest', 'show', 'nope');
    expect(result).toMatchObject({ code: 1 });
    expect(result.err).toContain('error NOT_FOUND (HTTP 404)');
  });
});

const pending = (stage: string): string => `${stage.padEnd(11)} [${' '.repeat(24)}]  pending`;

describe('backtest parsing and views', () => {
  it('parses --param and --exec lists', () => {
    expect(parseParams(['period=14', 'lower=20,25', 'k=1.5,2'])).toEqual({
      period: [14],
      lower: [20, 25],
      k: [1.5, 2],
    });
    expect(parseExecution([])).toBeUndefined();
    expect(parseExecution(['trailingStopPct=0,1.5', 'fraction=0.5'])).toEqual({
      trailingStopPct: [0, 1.5],
      fraction: [0.5],
    });
  });

  it('marks earlier stages complete when the job moved on, even unseen ones', () => {
    let memory: StageMemory = {};
    memory = remember(memory, makeJob(progress('stage_b', 2, 10)));
    const lines = renderStages(memory, makeJob(progress('stage_b', 2, 10)));
    expect(lines[0]).toBe(`stage_a     [${'#'.repeat(24)}]           done  100%`);
    expect(lines[1]).toContain('2/10   20%');
    expect(lines[2]).toBe(pending('finalizing'));
  });

  it('shortens variant keys to what tells the rows apart', () => {
    const { keys, common } = shortVariantKeys([item(1, 10, 2, 1), item(2, 10, 0, 1)]);
    expect(keys).toEqual([
      'ema:fast=10,slow=50 | stopLossPct=2',
      'ema:fast=10,slow=50 | stopLossPct=0',
    ]);
    expect(common).toContain('direction=long_only');
    expect(shortVariantKeys([item(1, 5, 0, 1)]).keys).toEqual(['ema:fast=5,slow=50']);
  });
});
