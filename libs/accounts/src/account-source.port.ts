import type { AccountSnapshotSource, RiskLimits } from '@tda/contracts';

/**
 * Where a position came from, which decides how it is valued:
 * - `paper`: a paper account's position; long adds size × mark to equity, short subtracts it (the
 *   sale proceeds are in cash); a symbol without market data fails the step;
 * - `holding`: a spot balance of an exchange account (long, entry unknown: valued at the mark with
 *   no P&L); one without a market in the quote currency is left out and counted;
 * - `derivative`: an exchange position (futures/swap, linear in the quote currency); only its
 *   unrealized P&L adds to equity (the collateral is in the quote balance).
 */
export type PositionOrigin = 'paper' | 'holding' | 'derivative';

export interface AccountStatePosition {
  /** BASE-QUOTE in the account's quote currency. */
  symbol: string;
  side: 'long' | 'short';
  /** Base-asset size (> 0). */
  size: number;
  /** Average entry price; undefined when the source does not know it (spot holdings). */
  averageEntry?: number;
  origin: PositionOrigin;
}

/** Counts only (never amounts): what a source left out, for outputs.execution. */
export interface AccountStateNotes {
  /** Paper positions opened after asOf. */
  openedAfterAsOf?: number;
  /** Exchange balances that cannot be a BASE-QUOTE position (odd currency codes). */
  skippedHoldings?: number;
  /** Exchange positions that are not linear in the quote currency, or lack size/side/entry. */
  skippedPositions?: number;
}

/** An account's state at asOf: what ACCOUNT_EXPORT values at the marks. */
export interface AccountState {
  source: AccountSnapshotSource;
  quoteCurrency: string;
  /** Free cash in the quote currency (available for new positions). */
  cash: number;
  /** Quote currency that is not free (open orders, margin): in equity, not in freeCash. */
  reservedCash: number;
  positions: AccountStatePosition[];
  riskLimits: RiskLimits;
  notes: AccountStateNotes;
}

export interface AccountStateRequest {
  /** The run's owner: another owner's account is an unknown account. */
  ownerId: string;
  accountId: string;
  /** The moment the state describes (epoch ms, the run's asOf). */
  asOf: number;
  signal?: AbortSignal;
}

/**
 * The ACCOUNT_EXPORT worker's view of accounts: the state of one account at asOf. Rejects with a
 * TdaError: UnknownAccountError / AccountSourceError (INVALID_STEP_INPUTS) for what the run asked
 * wrongly, UPSTREAM_UNAVAILABLE (retryable when transient) when the store or exchange cannot
 * answer. Errors never carry balances or credentials.
 */
export interface AccountSource {
  stateAt(request: AccountStateRequest): Promise<AccountState>;
}

/** A live exchange account's balances and positions now, valid for asOf within a tolerance. */
export interface ExchangeAccountState {
  quoteCurrency: string;
  cash: number;
  reservedCash: number;
  positions: AccountStatePosition[];
  notes: AccountStateNotes;
}

export interface ExchangeAccountRequest {
  quoteCurrency: string;
  asOf: number;
  signal?: AbortSignal;
}

/** The configured live exchange account (one per deployment; credentials from config). */
export interface ExchangeAccountSource {
  /** ccxt exchange id (the account document's `exchange` must name it). */
  readonly exchange: string;
  stateAt(request: ExchangeAccountRequest): Promise<ExchangeAccountState>;
}
