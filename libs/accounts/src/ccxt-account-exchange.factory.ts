import { AccountSourceError } from './account-source.errors';
import type { CcxtAccountExchangeLike } from './ccxt-account.source';

export interface CcxtAccountCredentials {
  apiKey: string;
  secret: string;
  /** Some exchanges (OKX, KuCoin) also want an API passphrase. */
  password?: string;
}

export interface CcxtAccountExchangeOptions {
  credentials: CcxtAccountCredentials;
  /** Per-request timeout (ms). Default 10 000. */
  timeoutMs?: number;
  /** Replaces ccxt's HTTP client (tests: recorded responses). */
  fetchImplementation?: (url: string, init: RequestInit) => Promise<Response>;
}

/**
 * A ccxt exchange client by id with API credentials, for reading one account (balances,
 * positions; never orders). ccxt is imported lazily (about a second to load). The credentials
 * live only inside the client: they are never logged, and an unknown id names only the id.
 */
export async function createCcxtAccountExchange(
  exchangeId: string,
  options: CcxtAccountExchangeOptions,
): Promise<CcxtAccountExchangeLike> {
  const ccxt = await import('ccxt');
  // `exchanges` is the class map in the ES module build and the list of ids in the CommonJS one.
  const catalogue: unknown = ccxt.exchanges;
  const ids = Array.isArray(catalogue) ? catalogue : Object.keys(ccxt.exchanges);
  const ctor: unknown = ids.includes(exchangeId)
    ? (ccxt as unknown as Record<string, unknown>)[exchangeId]
    : undefined;
  if (typeof ctor !== 'function') {
    throw new AccountSourceError('UPSTREAM_UNAVAILABLE', `unknown ccxt exchange '${exchangeId}'`, {
      details: { exchange: exchangeId },
      retryable: false,
    });
  }
  const { credentials } = options;
  const ExchangeClass = ctor as new (config: Record<string, unknown>) => CcxtAccountExchangeLike;
  return new ExchangeClass({
    enableRateLimit: true,
    timeout: options.timeoutMs ?? 10_000,
    apiKey: credentials.apiKey,
    secret: credentials.secret,
    ...(credentials.password === undefined ? {} : { password: credentials.password }),
    ...(options.fetchImplementation === undefined
      ? {}
      : { fetchImplementation: options.fetchImplementation }),
  });
}
