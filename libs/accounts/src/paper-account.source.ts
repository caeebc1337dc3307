import type { Account } from '@tda/contracts';
import { findOwnedAccount, type AccountStore } from './account-store.port';
import { AccountSourceError, UnknownAccountError } from './account-source.errors';
import type {
  AccountSource,
  AccountState,
  AccountStatePosition,
  AccountStateRequest,
  ExchangeAccountSource,
} from './account-source.port';

export interface PaperAccountSourceOptions {
  store: Pick<AccountStore, 'get'>;
  /** The configured live exchange account, for documents with `exchange`; none: refused. */
  exchange?: ExchangeAccountSource;
}

/**
 * Accounts from the AccountStore. A paper account has no history: its stored cash, positions and
 * limits are taken as the state at asOf, except positions opened after asOf (`openedAt > asOf`),
 * which are left out (counted in notes). A document with `exchange` stands for the configured live
 * exchange account: balances and positions come from it, the name, currency and risk limits from
 * the document.
 */
export class PaperAccountSource implements AccountSource {
  constructor(private readonly options: PaperAccountSourceOptions) {}

  async stateAt(request: AccountStateRequest): Promise<AccountState> {
    const found = await findOwnedAccount(this.options.store, request.ownerId, request.accountId);
    if (found === undefined) throw new UnknownAccountError(request.accountId);
    const { account } = found;
    return account.exchange === undefined
      ? paperState(account, request.asOf)
      : this.exchangeState(account, account.exchange, request);
  }

  private async exchangeState(
    account: Account,
    exchangeId: string,
    request: AccountStateRequest,
  ): Promise<AccountState> {
    const exchange = this.options.exchange;
    if (exchange === undefined || exchange.exchange !== exchangeId) {
      throw new AccountSourceError(
        'INVALID_STEP_INPUTS',
        `account '${account.accountId}' stands for the ${exchangeId} exchange account, but this worker ${
          exchange === undefined
            ? 'has no exchange account configured'
            : `is configured for ${exchange.exchange}`
        } (TDA_ACCOUNT_CCXT_EXCHANGE)`,
        { details: { accountId: account.accountId, exchange: exchangeId }, retryable: false },
      );
    }
    const live = await exchange.stateAt({
      quoteCurrency: account.quoteCurrency,
      asOf: request.asOf,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    return {
      source: { provider: 'ccxt', exchange: exchangeId },
      quoteCurrency: account.quoteCurrency,
      cash: live.cash,
      reservedCash: live.reservedCash,
      positions: live.positions,
      riskLimits: account.riskLimits,
      notes: live.notes,
    };
  }
}

function paperState(account: Account, asOf: number): AccountState {
  const visible = account.positions.filter(
    (p) => p.openedAt === undefined || Date.parse(p.openedAt) <= asOf,
  );
  const positions = visible.map((p): AccountStatePosition => ({
    symbol: p.symbol,
    side: p.side,
    size: p.size,
    averageEntry: p.averageEntry,
    origin: 'paper',
  }));
  const openedAfterAsOf = account.positions.length - visible.length;
  return {
    source: { provider: 'paper', updatedAt: account.updatedAt },
    quoteCurrency: account.quoteCurrency,
    cash: account.cash,
    reservedCash: 0,
    positions,
    riskLimits: account.riskLimits,
    notes: openedAfterAsOf > 0 ? { openedAfterAsOf } : {},
  };
}
