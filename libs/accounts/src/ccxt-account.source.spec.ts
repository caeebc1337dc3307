import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@tda/test-support';
import { CcxtAccountSource } from './ccxt-account.source';
import {
  AuthenticationError,
  RECORDED_API_KEY,
  RECORDED_SECRET,
  recordedAccountExchange,
  RequestTimeout,
} from './testing';

const NOW = Date.parse('2026-09-20T10:30:00Z');
const MINUTE = 60_000;

function source(exchange = recordedAccountExchange(), positions = true) {
  return new CcxtAccountSource({
    exchange,
    toleranceMs: 75 * MINUTE,
    positions,
    now: () => NOW,
  });
}

describe('CcxtAccountSource', () => {
  it('maps the unified balance and position structures', async () => {
    const exchange = recordedAccountExchange();
    const state = await source(exchange).stateAt({
      quoteCurrency: 'USDT',
      asOf: NOW - 30 * MINUTE,
    });
    expect(exchange.calls).toEqual(['fetchBalance', 'fetchPositions']);
    expect(state.cash).toBe(1034.5678);
    expect(state.reservedCash).toBeCloseTo(200, 9);
    expect(state.positions).toEqual([
      { symbol: 'BTC-USDT', side: 'long', size: 0.25, origin: 'holding' },
      { symbol: 'ETH-USDT', side: 'long', size: 1.5, origin: 'holding' },
      {
        symbol: 'BTC-USDT',
        side: 'short',
        size: 0.002,
        averageEntry: 82000,
        origin: 'derivative',
      },
      { symbol: 'ETH-USDT', side: 'long', size: 0.4, averageEntry: 2500, origin: 'derivative' },
    ]);
    // 'LD.X' cannot be a symbol; the inverse BTC/USD:BTC contract is not in USDT; the flat SOL
    // market is no position at all.
    expect(state.notes).toEqual({ skippedHoldings: 1, skippedPositions: 1 });
  });

  it('reads no positions without fetchPositions or when they are switched off', async () => {
    const spotOnly = recordedAccountExchange({ positions: undefined });
    expect(
      (await source(spotOnly).stateAt({ quoteCurrency: 'USDT', asOf: NOW })).positions,
    ).toHaveLength(2);
    expect(spotOnly.calls).toEqual(['fetchBalance']);
    const off = recordedAccountExchange();
    await source(off, false).stateAt({ quoteCurrency: 'USDT', asOf: NOW });
    expect(off.calls).toEqual(['fetchBalance']);
  });

  it('a live account has no history: asOf beyond the tolerance fails INVALID_STEP_INPUTS, unread', async () => {
    const exchange = recordedAccountExchange();
    const error = await rejectionOf(
      source(exchange).stateAt({ quoteCurrency: 'USDT', asOf: NOW - 2 * 60 * MINUTE }),
    );
    expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS', retryable: false });
    expect((error as Error).message).toMatch(/no history.*120 min before now.*75 min tolerance/);
    expect(exchange.calls).toEqual([]);
    await expect(
      source(exchange).stateAt({ quoteCurrency: 'USDT', asOf: NOW + 2 * 60 * MINUTE }),
    ).rejects.toMatchObject({ code: 'INVALID_STEP_INPUTS' });
  });

  it('exchange down is UPSTREAM_UNAVAILABLE retryable; refused credentials are not retryable', async () => {
    // ccxt messages may quote the request (keys, signatures): none of it may survive.
    const leaky = `binance GET https://api.binance.com/api/v3/account?signature=${RECORDED_SECRET} apiKey=${RECORDED_API_KEY}`;
    const down = await rejectionOf(
      source(recordedAccountExchange({ failWith: new RequestTimeout(leaky) })).stateAt({
        quoteCurrency: 'USDT',
        asOf: NOW,
      }),
    );
    expect(down).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      retryable: true,
      details: { exchange: 'binance', operation: 'fetchBalance', errorClass: 'RequestTimeout' },
    });
    const refused = await rejectionOf(
      source(recordedAccountExchange({ failWith: new AuthenticationError(leaky) })).stateAt({
        quoteCurrency: 'USDT',
        asOf: NOW,
      }),
    );
    expect(refused).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: false });
    expect((refused as Error).message).toMatch(/refused the configured credentials/);
    for (const error of [down, refused]) {
      const shown = JSON.stringify({ message: (error as Error).message, error });
      expect(shown).not.toContain(RECORDED_SECRET);
      expect(shown).not.toContain(RECORDED_API_KEY);
    }
  });

  it('a failure that is not ccxt’s is passed on unchanged (a bug of ours)', async () => {
    const bug = new TypeError('boom');
    await expect(
      source(recordedAccountExchange({ failWith: bug })).stateAt({
        quoteCurrency: 'USDT',
        asOf: NOW,
      }),
    ).rejects.toBe(bug);
  });
});
