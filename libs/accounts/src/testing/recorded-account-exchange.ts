import type {
  CcxtAccountExchangeLike,
  CcxtBalancesLike,
  CcxtPositionLike,
} from '../ccxt-account.source';

/** Fake credentials a test can search every output for. */
export const RECORDED_API_KEY = 'rec-api-key-7f3a9c';
export const RECORDED_SECRET = 'rec-secret-5e1d2b8f';

/**
 * A fetchBalance() answer in ccxt's unified balance structure (as ccxt builds it for a Binance spot
 * account: per-currency entries plus the free/used/total maps and the raw `info`): 1,234.5678 USDT
 * of which 200 in open orders, 0.25 BTC, 1.5 ETH, a zero balance and a currency code that cannot be
 * a symbol.
 */
export const RECORDED_BALANCES: CcxtBalancesLike = {
  info: { makerCommission: 10, balances: [{ asset: 'BTC', free: '0.25000000', locked: '0.0' }] },
  timestamp: 1790150400000,
  datetime: '2026-09-20T10:00:00.000Z',
  USDT: { free: 1034.5678, used: 200, total: 1234.5678 },
  BTC: { free: 0.25, used: 0, total: 0.25 },
  ETH: { free: 1, used: 0.5, total: 1.5 },
  BNB: { free: 0, used: 0, total: 0 },
  'LD.X': { free: 3, used: 0, total: 3 },
  free: { USDT: 1034.5678, BTC: 0.25, ETH: 1, BNB: 0, 'LD.X': 3 },
  used: { USDT: 200, BTC: 0, ETH: 0.5, BNB: 0, 'LD.X': 0 },
  total: { USDT: 1234.5678, BTC: 0.25, ETH: 1.5, BNB: 0, 'LD.X': 3 },
};

/**
 * A fetchPositions() answer in ccxt's unified position structure: a linear BTC perpetual short, a
 * flat market (contracts 0), an inverse contract settled in BTC (left out) and an ETH long.
 */
export const RECORDED_POSITIONS: readonly CcxtPositionLike[] = [
  {
    symbol: 'BTC/USDT:USDT',
    side: 'short',
    contracts: 2,
    contractSize: 0.001,
    entryPrice: 82000,
    // Fields TDA does not read, as ccxt returns them:
    ...{ notional: 162.5, leverage: 5, unrealizedPnl: 1.5, marginMode: 'cross', info: {} },
  },
  { symbol: 'SOL/USDT:USDT', side: 'long', contracts: 0, contractSize: 1, entryPrice: 0 },
  { symbol: 'BTC/USD:BTC', side: 'long', contracts: 10, contractSize: 100, entryPrice: 80000 },
  { symbol: 'ETH/USDT:USDT', side: 'long', contracts: 0.4, contractSize: 1, entryPrice: 2500 },
];

export interface RecordedAccountExchangeOptions {
  balances?: CcxtBalancesLike;
  positions?: readonly CcxtPositionLike[] | undefined;
  /** Thrown by fetchBalance instead of answering. */
  failWith?: Error;
}

/** A typed fake ccxt exchange answering with the recorded unified structures; counts calls. */
export function recordedAccountExchange(
  options: RecordedAccountExchangeOptions = {},
): CcxtAccountExchangeLike & { calls: string[] } {
  const calls: string[] = [];
  const positions = 'positions' in options ? options.positions : RECORDED_POSITIONS;
  return {
    id: 'binance',
    calls,
    has: { fetchBalance: true, fetchPositions: positions !== undefined },
    fetchBalance: () => {
      calls.push('fetchBalance');
      if (options.failWith !== undefined) return Promise.reject(options.failWith);
      return Promise.resolve(structuredClone(options.balances ?? RECORDED_BALANCES));
    },
    ...(positions === undefined
      ? {}
      : {
          fetchPositions: () => {
            calls.push('fetchPositions');
            return Promise.resolve(structuredClone(positions));
          },
        }),
  };
}

/**
 * ccxt-like error classes (the source reads class names along the prototype chain, as it does for
 * the real ccxt errors): NetworkError < BaseError, RequestTimeout < NetworkError,
 * AuthenticationError < ExchangeError < BaseError.
 */
export class BaseError extends Error {}
export class NetworkError extends BaseError {}
export class RequestTimeout extends NetworkError {}
export class ExchangeError extends BaseError {}
export class AuthenticationError extends ExchangeError {}
