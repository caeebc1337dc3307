import {
  CcxtAccountSource,
  createCcxtAccountExchange,
  PaperAccountSource,
  type AccountStore,
  type CcxtAccountExchangeLike,
  type ExchangeAccountSource,
} from '@tda/accounts';
import { openAccountStore } from '@tda/backends';
import { createConfiguredCandleSource, type CcxtExchangeLike } from '@tda/market-data';
import { exchangeAccountSettings, type AccountExportConfig } from './config';
import { AccountExportHandler } from './account-export.handler';

export interface AccountExportOverrides {
  /**
   * The account store to read (a composer's shared one: `npm start` in memory mode passes
   * `Backends.accounts`, so the API's accounts are the worker's). Default: opened for TDA_BACKEND.
   */
  accounts?: AccountStore;
  /** A ready exchange for the live account (tests: a recorded one) instead of building one. */
  accountExchange?: CcxtAccountExchangeLike;
  /** A ready exchange for the marks when TDA_MARKET_DATA=ccxt (tests: a recorded one). */
  marketExchange?: CcxtExchangeLike;
  /** Clock of live data (the forming candle, the live account's tolerance); default Date.now. */
  now?: () => number;
}

export interface AccountExportRuntime {
  handler: AccountExportHandler;
  /** The live exchange account's id, when one is configured (never its credentials). */
  exchange?: string;
  close(): Promise<void>;
}

/** The live account source, when TDA_ACCOUNT_CCXT_* configure one (or a test hands an exchange). */
async function exchangeSource(
  config: AccountExportConfig,
  overrides: AccountExportOverrides,
): Promise<ExchangeAccountSource | undefined> {
  const settings = exchangeAccountSettings(config);
  const exchange =
    overrides.accountExchange ??
    (settings === undefined
      ? undefined
      : await createCcxtAccountExchange(settings.exchange, {
          credentials: settings.credentials,
          timeoutMs: config.TDA_CCXT_TIMEOUT_MS,
        }));
  if (exchange === undefined) return undefined;
  return new CcxtAccountSource({
    exchange,
    toleranceMs: config.TDA_ACCOUNT_LIVE_TOLERANCE_MINUTES * 60_000,
    positions: config.TDA_ACCOUNT_CCXT_POSITIONS === 'auto',
    ...(overrides.now === undefined ? {} : { now: overrides.now }),
  });
}

/**
 * The ACCOUNT_EXPORT handler: accounts from the AccountStore (the given one, or one opened for
 * TDA_BACKEND on a client of its own, closed by `close`), the live exchange account when
 * configured, marks from the configured market data.
 */
export async function createAccountExportRuntime(
  config: AccountExportConfig,
  overrides: AccountExportOverrides = {},
): Promise<AccountExportRuntime> {
  const opened = overrides.accounts === undefined ? openAccountStore(config) : undefined;
  try {
    const candles = await createConfiguredCandleSource(config, {
      ...(overrides.marketExchange === undefined ? {} : { exchange: overrides.marketExchange }),
      ...(overrides.now === undefined ? {} : { now: overrides.now }),
    });
    const exchange = await exchangeSource(config, overrides);
    const store = overrides.accounts ?? opened?.store;
    if (store === undefined) throw new Error('unreachable: no account store');
    const accounts = new PaperAccountSource({
      store,
      ...(exchange === undefined ? {} : { exchange }),
    });
    return {
      handler: new AccountExportHandler({ accounts, candles }),
      ...(exchange === undefined ? {} : { exchange: exchange.exchange }),
      close: async () => opened?.close(),
    };
  } catch (error) {
    await opened?.close().catch(() => undefined);
    throw error;
  }
}
