import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  CcxtAccountSource,
  InMemoryAccountStore,
  PaperAccountSource,
  ensureDemoAccount,
} from '@tda/accounts';
import { makeNewAccount, recordedAccountExchange } from '@tda/accounts/testing';
import type { AccountSnapshot, FlowRun } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { makeRun } from '@tda/flow-engine/testing';
import { BundledCandleSource, CcxtCandleSource } from '@tda/market-data';
import { ACCOUNT_EXPORT_STEP, accountSnapshotProblem } from '@tda/step-types';
import { rejectionOf } from '@tda/test-support';
import { requireHandlerContext } from '@tda/worker-kit/testing';
import { describe, expect, it } from 'vitest';
import { AccountExportHandler } from './account-export.handler';
import { HOUR, recordedMarket, T } from './testing/recorded-market';

const EXAMPLE = loadExample('account_snapshot.example.json') as AccountSnapshot;
const STEP_ID = 'account_export';
const bundled = new BundledCandleSource();

function runFor(
  inputs: Record<string, unknown>,
  scope: Record<string, unknown> = { symbol: 'BTC-USDT', asOf: '2026-09-20T00:00:00Z' },
  ownerId = 'local-user',
): FlowRun {
  return makeRun(
    { [STEP_ID]: { stepType: 'ACCOUNT_EXPORT', status: 'RUNNING', inputs } },
    { runId: EXAMPLE.runId, ownerId, scope: scope as FlowRun['scope'] },
  );
}

async function execute(handler: AccountExportHandler, run: FlowRun) {
  const context = requireHandlerContext(ACCOUNT_EXPORT_STEP, {
    run,
    stepId: STEP_ID,
    artifacts: new InMemoryArtifactStore(),
  });
  const result = await handler.execute(context);
  const bytes = result.artifacts[0]?.data ?? Buffer.alloc(0);
  const snapshot = JSON.parse(bytes.toString('utf8')) as AccountSnapshot;
  return { result, bytes, snapshot, context };
}

async function paperHandler(store: InMemoryAccountStore) {
  return new AccountExportHandler({
    accounts: new PaperAccountSource({ store }),
    candles: bundled,
  });
}

describe('AccountExportHandler (paper accounts, bundled data)', () => {
  it('the demo account at asOf is the contract example, byte-identical on every execution', async () => {
    const store = new InMemoryAccountStore({ clock: () => new Date('2026-09-01T08:00:00Z') });
    await ensureDemoAccount(store, 'local-user');
    const handler = await paperHandler(store);
    const run = runFor({ accountId: 'demo', symbol: 'BTC-USDT' });
    const first = await execute(handler, run);
    expect(first.snapshot).toEqual({
      ...EXAMPLE,
      source: { provider: 'paper', updatedAt: '2026-09-01T08:00:00.000Z' },
    });
    expect(first.result.primaryUri).toBe(
      `gs://tda-artifacts/runs/${run.runId}/_/account_export.json`,
    );
    expect(ACCOUNT_EXPORT_STEP.artifact.validate(first.snapshot).ok).toBe(true);
    expect(accountSnapshotProblem(first.snapshot)).toBeUndefined();
    const second = await execute(handler, run);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    // Ids and counts only: no cash, sizes or prices.
    expect(first.result.execution).toEqual({
      account: {
        accountId: 'demo',
        provider: 'paper',
        asOf: '2026-09-20T00:00:00Z',
        positions: 1,
        pricedSymbols: 1,
      },
    });
  });

  it('longs, shorts and the run symbol are marked; positions opened after asOf are left out', async () => {
    const store = new InMemoryAccountStore();
    await store.create(
      makeNewAccount({
        accountId: 'mixed',
        ownerId: 'local-user',
        cash: 5_000,
        positions: [
          { symbol: 'ETH-USDT', side: 'short', size: 2, averageEntry: 2_700 },
          {
            symbol: 'BTC-USDT',
            side: 'long',
            size: 0.1,
            averageEntry: 70_000,
            openedAt: '2026-09-20T00:30:00Z',
          },
        ],
      }),
    );
    const { snapshot, result } = await execute(
      await paperHandler(store),
      runFor({ accountId: 'mixed' }, { symbol: 'BTC/USDT', asOf: '2026-09-20T00:00:00Z' }),
    );
    const eth = 2632.69; // ETHUSDT 2026-09-19 23:00 close
    expect(snapshot.positions).toEqual([
      {
        symbol: 'ETH-USDT',
        side: 'short',
        size: 2,
        averageEntry: 2_700,
        markPrice: eth,
        marketValue: 5265.38,
        unrealizedPnl: 134.62,
        unrealizedPnlPct: 2.492963,
        fractionOfEquity: snapshot.positions[0]?.fractionOfEquity,
      },
    ]);
    expect(snapshot.equity).toBeCloseTo(5_000 - 5265.38, 8);
    expect(snapshot.positions[0]?.fractionOfEquity).toBe(0); // equity below zero
    expect(snapshot.prices?.map((p) => p.symbol)).toEqual(['BTC/USDT', 'ETH-USDT']);
    expect(accountSnapshotProblem(snapshot)).toBeUndefined();
    expect(result.execution).toMatchObject({ account: { openedAfterAsOf: 1, positions: 1 } });
  });

  it('a run without asOf is valued at the end of the 1h data', async () => {
    const store = new InMemoryAccountStore();
    await ensureDemoAccount(store, 'local-user');
    const { snapshot } = await execute(
      await paperHandler(store),
      runFor({ accountId: 'demo' }, { symbol: 'BTC-USDT' }),
    );
    expect(snapshot.asOf).toBe('2026-09-20T11:00:00Z');
    expect(snapshot.prices).toEqual([
      {
        symbol: 'BTC-USDT',
        price: 80319.58,
        candleOpenTime: '2026-09-20T10:00:00Z',
        timeframe: '1h',
      },
    ]);
  });

  it('an unknown account, or another owner’s, fails INVALID_STEP_INPUTS', async () => {
    const store = new InMemoryAccountStore();
    await ensureDemoAccount(store, 'someone-else');
    const handler = await paperHandler(store);
    for (const run of [
      runFor({ accountId: 'nope' }),
      runFor({ accountId: 'demo' }, undefined, 'local-user'),
    ]) {
      const error = await rejectionOf(execute(handler, run));
      expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS', retryable: false });
    }
  });

  it('a paper position the market data does not have fails INVALID_STEP_INPUTS naming what exists', async () => {
    const store = new InMemoryAccountStore();
    await store.create(
      makeNewAccount({
        ownerId: 'local-user',
        positions: [{ symbol: 'SOL-USDT', side: 'long', size: 1, averageEntry: 150 }],
      }),
    );
    const error = await rejectionOf(
      execute(await paperHandler(store), runFor({ accountId: 'acc-1' })),
    );
    expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS' });
    expect((error as Error).message).toMatch(/unknown symbol 'SOL-USDT'; available: .*BTC-USDT/);
  });

  it('recover vouches for a snapshot of the same account and asOf only', async () => {
    const store = new InMemoryAccountStore();
    await ensureDemoAccount(store, 'local-user');
    const handler = await paperHandler(store);
    const run = runFor({ accountId: 'demo' });
    const { snapshot, context } = await execute(handler, run);
    const existing = {
      uri: 'gs://tda-artifacts/x.json',
      artifact: snapshot,
      bytes: Buffer.alloc(0),
    };
    expect(await handler.recover(existing as never, context)).toMatchObject({
      artifacts: [],
      primaryUri: 'gs://tda-artifacts/x.json',
      execution: { account: { accountId: 'demo', positions: 1 } },
    });
    const other = { ...existing, artifact: { ...snapshot, accountId: 'other' } };
    expect(await handler.recover(other as never, context)).toBeNull();
    const earlier = { ...existing, artifact: { ...snapshot, asOf: '2026-09-19T00:00:00Z' } };
    expect(await handler.recover(earlier as never, context)).toBeNull();
  });
});

describe('AccountExportHandler (live exchange account, live marks)', () => {
  const NOW = T + 2 * HOUR + 40 * 60_000; // 10:40: asOf 10:00 (the start of the hour)

  async function liveHandler(positions = true) {
    const store = new InMemoryAccountStore();
    await store.create(
      makeNewAccount({
        accountId: 'live',
        ownerId: 'local-user',
        exchange: 'binance',
        cash: 0,
        positions: [],
        riskLimits: { maxPositionFraction: 0.05 },
      }),
    );
    const exchange = new CcxtAccountSource({
      exchange: recordedAccountExchange(positions ? {} : { positions: undefined }),
      toleranceMs: 75 * 60_000,
      now: () => NOW,
    });
    return new AccountExportHandler({
      accounts: new PaperAccountSource({ store, exchange }),
      candles: new CcxtCandleSource({ exchange: recordedMarket, now: () => NOW }),
    });
  }

  it('values holdings and derivatives at the last 1h close before asOf', async () => {
    const { snapshot, result } = await execute(
      await liveHandler(),
      runFor({ accountId: 'live' }, { symbol: 'BTC-USDT', asOf: '2026-09-20T10:00:00Z' }),
    );
    const btc = 80470.01; // the 09:00 candle: the 10:00 one has not ended at asOf
    const eth = 2579.77;
    expect(snapshot.source).toEqual({ provider: 'ccxt', exchange: 'binance' });
    expect(snapshot.freeCash).toBe(1034.5678);
    const derivativePnl = (82000 - btc) * 0.002 + (eth - 2500) * 0.4;
    expect(snapshot.equity).toBeCloseTo(1234.5678 + 0.25 * btc + 1.5 * eth + derivativePnl, 6);
    expect(snapshot.positions.map((p) => [p.symbol, p.side, p.markPrice])).toEqual([
      ['BTC-USDT', 'long', btc],
      ['ETH-USDT', 'long', eth],
      ['BTC-USDT', 'short', btc],
      ['ETH-USDT', 'long', eth],
    ]);
    expect(snapshot.riskLimits).toEqual({ maxPositionFraction: 0.05 });
    expect(accountSnapshotProblem(snapshot)).toBeUndefined();
    expect(result.execution).toEqual({
      account: {
        accountId: 'live',
        provider: 'ccxt',
        exchange: 'binance',
        asOf: '2026-09-20T10:00:00Z',
        positions: 4,
        pricedSymbols: 2,
        skippedHoldings: 1,
        skippedPositions: 1,
      },
    });
  });

  it('a past asOf fails: a live account has no history', async () => {
    const error = await rejectionOf(
      execute(
        await liveHandler(),
        runFor({ accountId: 'live' }, { symbol: 'BTC-USDT', asOf: '2026-09-20T08:00:00Z' }),
      ),
    );
    expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS' });
    expect((error as Error).message).toMatch(/no history/);
  });
});
