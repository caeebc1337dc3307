import { validate, type EvaluationView, type FlowRun } from '@tda/contracts';
import { BundledCandleSource } from '@tda/market-data';
import { runCli, type CliIo } from '@tda/service-cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eStack, type E2eStack } from './testing/e2e-stack';

/**
 * A walk-forward evaluation end to end on the emulators, offline (the deterministic analyst and
 * recommender, bundled candles): `tda evaluate recommendations … --watch` runs flow 4 at six
 * weekly points, three at a time, and prints every point's score and the table. No look-ahead:
 * every candle a run's steps read had closed by its asOf, and the recommendation's levels are
 * anchored to the close at asOf.
 */
const TF_MS: Record<string, number> = {
  '4h': 4 * 3_600_000,
  '1d': 86_400_000,
  '1w': 7 * 86_400_000,
};

describe('walk-forward evaluation of recommendations (emulators, offline)', () => {
  let h: E2eStack;
  beforeAll(async () => {
    h = await startE2eStack({ name: 'evaluate' });
  });
  afterAll(async () => {
    await h?.stack.close();
  });

  const cli = async (...argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      stdout: { write: (t: string) => out.push(t) > 0 },
      stderr: { write: (t: string) => err.push(t) > 0 },
      target: () => ({ baseUrl: h.stack.url, token: h.stack.token, source: 'env' }),
      watchIntervalMs: 250,
    };
    const code = await runCli(argv, io);
    return { code, out: out.join(''), err: err.join('') };
  };

  /**
   * Every complete candle of every OHLCV export of the run had closed at its asOf; a bucket cut
   * by asOf (kept, marked incomplete) closes at the last source bar that ended at asOf.
   */
  async function expectNoLookAhead(run: FlowRun): Promise<void> {
    const asOf = Date.parse(String(run.scope['asOf']));
    for (const step of Object.values(run.steps).filter((s) => s.stepType === 'OHLCV_EXPORT')) {
      const bytes = await h.stack.backends.artifacts.read(step.outputs.gcs_uri ?? '');
      const checked = validate.ohlcvExport(JSON.parse(bytes.toString('utf8')));
      if (!checked.ok) throw new Error('invalid ohlcv_export');
      const { candles, timeframe, source } = checked.value;
      const complete = candles.filter((c) => c.complete !== false);
      const ends = complete.map((c) => Date.parse(c.openTime) + (TF_MS[timeframe] ?? Infinity));
      expect(Math.max(...ends)).toBeLessThanOrEqual(asOf);
      const open = candles.filter((c) => c.complete === false);
      expect(open.length).toBeLessThanOrEqual(1);
      if (open[0] === undefined) continue;
      expect(candles.at(-1)).toBe(open[0]);
      const [lastBar] = (
        await new BundledCandleSource().fetchCandles({
          symbol: run.scope.symbol,
          timeframe: source.sourceTimeframe ?? timeframe,
          asOf,
          limit: 1,
        })
      ).candles;
      expect(open[0].close).toBe(lastBar?.close);
    }
  }

  it('runs flow 4 at each point, scores every recommendation and prints the table', async () => {
    const result = await cli(
      'evaluate',
      'recommendations',
      'BTC-USDT',
      '--from',
      '2026-08-01T00:00:00Z',
      '--to',
      '2026-09-05T00:00:00Z',
      '--every',
      '1w',
      '--window',
      '3',
      '--watch',
      '--json',
    );
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const view = JSON.parse(result.out) as EvaluationView;
    expect(view).toMatchObject({
      state: 'completed',
      counts: { points: 6, triggered: 6, active: 0, succeeded: 6 },
    });
    // Never more than `window` of its runs at once: each started after an earlier one ended.
    const runs = await Promise.all(view.items.map((i) => h.api.getRun(i.runId ?? '')));
    const overlapping = (t: number) =>
      runs.filter((r) => Date.parse(r.createdAt) <= t && Date.parse(r.updatedAt) > t).length;
    expect(Math.max(...runs.map((r) => overlapping(Date.parse(r.createdAt))))).toBeLessThanOrEqual(
      3,
    );
    for (const run of runs) await expectNoLookAhead(run);
    // Every point scored through the engine over its horizon; the table sums them up.
    const recos = view.items.flatMap((i) => i.recommendations ?? []);
    expect(recos).toHaveLength(6);
    expect(recos.every((r) => r.score.status !== 'pending' && r.score.buyAndHoldPct !== null)).toBe(
      true,
    );
    const [row] = view.table;
    expect(view.table).toHaveLength(1);
    expect(row).toMatchObject({ count: 6, pending: 0 });
    expect((row?.trades ?? 0) + (row?.noTrade ?? 0)).toBe(6);

    // The same evaluation as a person reads it (`show --points`), printed for the log.
    const shown = await cli('evaluate', 'show', view.evaluationId, '--points');
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(/PROVIDER\s+MODEL\s+PROMPT\s+RECOS\s+TRADES\s+HIT RATE/);
    expect(shown.out).toContain(`${row?.provider ?? '?'}  `);
    process.stdout.write(`\n${shown.out}\n`);
  }, 300_000);
});
