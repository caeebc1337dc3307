import type { BacktestJob } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import {
  executionColumns,
  formatMetric,
  formatPrice,
  formatSignedPct,
  isTerminalJob,
  jobRow,
  parseMarkdownTable,
  pollWhileActive,
  rememberStages,
  stageBars,
  strategyParams,
  tradePnlPct,
  variantCounts,
} from './backtests';

/** contracts/examples/backtest_job.example.json: stage B, 10 of 32 expanded variants. */
function job(overrides: Partial<BacktestJob> = {}): BacktestJob {
  return {
    job_id: '20260921-000000_BTC-USDT_ac9zs',
    owner_id: 'user-1',
    state: 'running',
    stage: 'stage_b',
    progress: {
      stage: 'stage_b',
      processed_units: 10,
      total_units: 32,
      updated_at: '2026-09-21T00:00:02.000Z',
    },
    symbol: 'BTC-USDT',
    timeframe: '1h',
    request: {
      symbol: 'BTC-USDT',
      bars: 200,
      strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [5, 10, 20], slow: [30, 50] } },
      execution: {
        direction: ['long_only', 'long_short'],
        fraction: [1],
        feeBps: [10],
        slippageBps: [5],
        stopLossPct: [0, 2],
        takeProfitPct: [0, 5],
        trailingStopPct: [0],
      },
      top_k: 3,
      preselect: 4,
      top_trades_n: 1,
    },
    hashes: {
      request_hash: 'a'.repeat(64),
      engine_params_hash: 'b'.repeat(64),
      backtest_runtime_config_hash: 'c'.repeat(64),
    },
    created_at: '2026-09-21T00:00:00.000Z',
    ...overrides,
  };
}

const progress = (stage: 'stage_a' | 'stage_b' | 'finalizing', processed: number, total: number) =>
  ({
    stage,
    progress: { stage, processed_units: processed, total_units: total, updated_at: 'x' },
  }) as const;

describe('a job row', () => {
  it('reads market, strategy, state, stage, percent and the grid size', () => {
    expect(jobRow(job())).toEqual({
      jobId: '20260921-000000_BTC-USDT_ac9zs',
      symbol: 'BTC-USDT',
      timeframe: '1h',
      strategy: 'ma_cross (ema)',
      state: 'running',
      stateLabel: 'Running',
      tone: 'active',
      stage: 'Stage B',
      percent: 31,
      units: '10/32',
      variants: '48',
      createdAt: '2026-09-21T00:00:00.000Z',
    });
  });

  it('is 100% and Done once succeeded; without progress it has no percent', () => {
    expect(jobRow(job({ state: 'succeeded', ...progress('finalizing', 0, 1) }))).toMatchObject({
      stage: 'Done',
      percent: 100,
      tone: 'success',
    });
    const { progress: _, stage: __, ...queued } = job({ state: 'queued' });
    expect(jobRow(queued)).toMatchObject({ stage: '—', percent: undefined, units: '' });
  });
});

describe('variant counts', () => {
  it('combines ascending pairs only (fast < slow) and multiplies the execution lists', () => {
    expect(variantCounts(job().request)).toEqual({ base: 6, execution: 8, total: 48 });
    const crossed = { strategy: { kind: 'ma_cross', params: { fast: [5, 30], slow: [10, 30] } } };
    expect(variantCounts(crossed)).toEqual({ base: 2, execution: 1, total: 2 });
    const bollinger = {
      strategy: { kind: 'bollinger_breakout', params: { period: [10, 20], k: [1, 2, 3] } },
    };
    expect(variantCounts(bollinger)?.base).toBe(6);
  });

  it('is unknown without a strategy grid', () => {
    expect(variantCounts({})).toBeUndefined();
  });
});

describe('polling', () => {
  it('polls every 2 s while a job is queued or running, not once all are terminal', () => {
    expect(pollWhileActive(['succeeded', 'running'])).toBe(2_000);
    expect(pollWhileActive(['queued'])).toBe(2_000);
    expect(pollWhileActive(['succeeded', 'failed', 'cancelled'])).toBe(false);
    expect(pollWhileActive([])).toBe(false);
    expect(isTerminalJob('running')).toBe(false);
  });
});

describe('stage bars', () => {
  it('shows earlier stages done, the current one in units and later ones waiting', () => {
    const bars = stageBars(job());
    expect(bars.map((b) => [b.stage, b.status, b.now, b.max, b.percent, b.text])).toEqual([
      ['stage_a', 'done', 100, 100, 100, 'Done'],
      ['stage_b', 'active', 10, 32, 31, '10 / 32 expanded variants'],
      ['finalizing', 'pending', 0, 100, 0, 'Waiting'],
    ]);
  });

  it('keeps the counts of a stage it saw before (its total, full)', () => {
    let memory = rememberStages({}, job(progress('stage_a', 4, 6)));
    memory = rememberStages(memory, job());
    expect(memory.stage_a).toEqual({ processed: 6, total: 6 });
    expect(stageBars(job(), memory)[0]).toMatchObject({
      status: 'done',
      now: 6,
      max: 6,
      text: '6 / 6 base variants',
    });
  });

  it('is all done when succeeded; stopped then not run when cancelled or failed', () => {
    const done = stageBars(job({ state: 'succeeded', ...progress('finalizing', 1, 1) }));
    expect(done.map((b) => [b.status, b.percent])).toEqual([
      ['done', 100],
      ['done', 100],
      ['done', 100],
    ]);
    const cancelled = stageBars(job({ state: 'cancelled' }));
    expect(cancelled.map((b) => [b.status, b.text])).toEqual([
      ['done', 'Done'],
      ['stopped', '10 / 32 expanded variants'],
      ['skipped', 'Not run'],
    ]);
  });

  it('waits on every stage while queued', () => {
    const { progress: _, stage: __, ...queued } = job({ state: 'queued' });
    expect(stageBars(queued).map((b) => b.status)).toEqual(['pending', 'pending', 'pending']);
  });
});

describe('variants in the top table', () => {
  const key = (exec: string) => ({ variant_key: `ma_cross:ema:fast=5,slow=30|${exec}` });

  it('shows per row the execution fields that vary, and the shared ones once', () => {
    const { varying, common } = executionColumns([
      key('direction=long_short,feeBps=10,stopLossPct=0'),
      key('direction=long_only,feeBps=10,stopLossPct=2'),
      key('direction=long_short,feeBps=10,stopLossPct=2'),
    ]);
    expect(varying).toEqual([
      ['direction=long_short', 'stopLossPct=0'],
      ['direction=long_only', 'stopLossPct=2'],
      ['direction=long_short', 'stopLossPct=2'],
    ]);
    expect(common).toEqual(['feeBps=10']);
  });

  it('writes strategy parameters without kind and ma', () => {
    expect(strategyParams({ kind: 'ma_cross', ma: 'ema', fast: 5, slow: 30 })).toBe(
      'fast=5, slow=30',
    );
  });

  it('formats metrics, signed returns, a lossless profit factor and trade pnl', () => {
    expect(formatMetric(1.23456)).toBe('1.23');
    expect(formatMetric(null)).toBe('∞');
    expect(formatMetric(undefined)).toBe('—');
    expect(formatSignedPct(12.345)).toBe('+12.35%');
    expect(formatSignedPct(-3.1)).toBe('−3.10%');
    expect(formatSignedPct(0)).toBe('0.00%');
    expect(tradePnlPct({ pnl: 0.0123 })).toBe('+1.23%');
    expect(formatPrice(60220.685295)).toBe('60,220.69');
    expect(formatPrice(0.012345678)).toBe('0.0123457');
    expect(formatPrice(123.456789)).toBe('123.457');
  });
});

describe('report tables', () => {
  it('parses the worker’s two-column pipe table, escaped pipes kept in the cell', () => {
    const md = [
      '| field | value |',
      '| --- | --- |',
      '| variant_key | ma_cross:ema:fast=5,slow=30\\|direction=long_only |',
      '| sharpe | 1.2345 |',
    ].join('\n');
    expect(parseMarkdownTable(md)).toEqual({
      header: ['field', 'value'],
      rows: [
        ['variant_key', 'ma_cross:ema:fast=5,slow=30|direction=long_only'],
        ['sharpe', '1.2345'],
      ],
    });
  });

  it('is undefined for anything but one table (the page renders it as Markdown then)', () => {
    expect(parseMarkdownTable('# Title\n\nSome text')).toBeUndefined();
    expect(parseMarkdownTable('| a | b |\n| x | y |')).toBeUndefined();
    expect(parseMarkdownTable('| a | b |\n| --- | --- |\n| 1 |')).toBeUndefined();
  });
});
