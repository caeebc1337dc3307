import type { Exchange } from 'ccxt';
import { MarketDataUnavailableError } from '../market-data.errors';

export interface CcxtExchangeOptions {
  /** Per-request timeout of the exchange client (ms). Default 10 000. */
  timeoutMs?: number;
  /**
   * Replaces ccxt's HTTP client (`fetchImplementation`): `(url, init) => Promise<Response>`.
   * Tests use it to serve recorded exchange responses; production leaves it unset.
   */
  fetchImplementation?: (url: string, init: RequestInit) => Promise<Response>;
  /** Extra ccxt `options` for the exchange (merged over the defaults below). */
  exchangeOptions?: Record<string, unknown>;
}

/**
 * Market types whose catalogue is loaded: only spot, which is all TDA reads. For Binance this
 * skips the futures catalogues (two more large requests on every cold start).
 */
const DEFAULT_EXCHANGE_OPTIONS: Record<string, Record<string, unknown>> = {
  binance: { fetchMarkets: { types: ['spot'] } },
};

/**
 * Builds a ccxt exchange client by id (e.g. `binance`), public endpoints only (no API keys: TDA
 * reads candles, never trades). ccxt is imported lazily: it takes about a second to load and the
 * bundled source never needs it.
 */
export async function createCcxtExchange(
  exchangeId: string,
  options: CcxtExchangeOptions = {},
): Promise<Exchange> {
  const ccxt = await import('ccxt');
  // `exchanges` is the class map in the ES module build and the list of ids in the CommonJS one
  // (used under @swc-node/register): accept both.
  const catalogue: unknown = ccxt.exchanges;
  const ids = Array.isArray(catalogue) ? catalogue : Object.keys(ccxt.exchanges);
  const ctor: unknown = ids.includes(exchangeId)
    ? (ccxt as unknown as Record<string, unknown>)[exchangeId]
    : undefined;
  if (typeof ctor !== 'function') {
    throw new MarketDataUnavailableError(
      `unknown ccxt exchange '${exchangeId}'`,
      { exchange: exchangeId },
      { retryable: false },
    );
  }
  const ExchangeClass = ctor as new (config: Record<string, unknown>) => Exchange;
  return new ExchangeClass({
    enableRateLimit: true,
    timeout: options.timeoutMs ?? 10_000,
    options: { ...DEFAULT_EXCHANGE_OPTIONS[exchangeId], ...options.exchangeOptions },
    ...(options.fetchImplementation === undefined
      ? {}
      : { fetchImplementation: options.fetchImplementation }),
  });
}
