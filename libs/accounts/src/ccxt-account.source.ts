import { ccxtErrorClasses } from '@tda/market-data';
import { AccountSourceError } from './account-source.errors';
import type {
  AccountStatePosition,
  ExchangeAccountRequest,
  ExchangeAccountSource,
  ExchangeAccountState,
} from './account-source.port';

/** One currency of ccxt's unified balance structure (`balances[code]`). */
export interface CcxtBalanceLike {
  free?: number | undefined;
  used?: number | undefined;
  total?: number | undefined;
}

/**
 * ccxt's unified `fetchBalance()` result: `{ info, timestamp?, datetime?, free: {code: n},
 * used: {...}, total: {...}, <code>: {free, used, total} }`. Only the per-currency entries are read.
 */
export type CcxtBalancesLike = Readonly<Record<string, unknown>>;

/** The fields of ccxt's unified position structure (`fetchPositions()`) this source reads. */
export interface CcxtPositionLike {
  symbol?: string | undefined;
  side?: string | undefined;
  contracts?: number | undefined;
  contractSize?: number | undefined;
  entryPrice?: number | undefined;
}

/**
 * The subset of a ccxt `Exchange` an account source uses; a real `new ccxt.binance({ apiKey,
 * secret })` satisfies it, tests inject a typed fake with recorded unified responses.
 */
export interface CcxtAccountExchangeLike {
  readonly id: string;
  readonly has: Readonly<Record<string, boolean | string | undefined>>;
  fetchBalance(): Promise<CcxtBalancesLike>;
  fetchPositions?(): Promise<readonly CcxtPositionLike[]>;
}

export interface CcxtAccountSourceOptions {
  exchange: CcxtAccountExchangeLike;
  /** How far asOf may lie from now: a live account has no history. */
  toleranceMs: number;
  /** Read derivative positions when the exchange has fetchPositions (default true). */
  positions?: boolean;
  /** Current time (ms); default Date.now. */
  now?: () => number;
}

/** Keys of the unified balance structure that are not currencies. */
const BALANCE_META_KEYS = new Set([
  'info',
  'timestamp',
  'datetime',
  'free',
  'used',
  'total',
  'debt',
]);
const CURRENCY = /^[A-Z0-9]{2,20}$/;
/** account_snapshot positions maxItems. */
const MAX_POSITIONS = 200;

/**
 * The live exchange account through ccxt (`fetchBalance`, and `fetchPositions` when the exchange
 * has it), with API credentials from config. A live account has no history: the state is read
 * now, so a run whose asOf lies more than `toleranceMs` from now fails INVALID_STEP_INPUTS.
 * Balances: the quote currency's free amount is the cash, the rest of it (in orders, margin) is
 * reserved; every other currency with a positive total is a long spot holding BASE-QUOTE. Positions:
 * linear contracts settled in the quote currency become `derivative` positions (size = contracts ×
 * contractSize). Exchange failures are mapped by class name only: ccxt's messages can quote the
 * exchange's answer, so none of their text reaches an error, a log or the run document.
 */
export class CcxtAccountSource implements ExchangeAccountSource {
  readonly exchange: string;
  private readonly now: () => number;

  constructor(private readonly options: CcxtAccountSourceOptions) {
    this.exchange = options.exchange.id;
    this.now = options.now ?? Date.now;
  }

  async stateAt(request: ExchangeAccountRequest): Promise<ExchangeAccountState> {
    this.assertLive(request.asOf);
    const { exchange } = this.options;
    const balances = await this.call('fetchBalance', () => exchange.fetchBalance());
    request.signal?.throwIfAborted();
    const wantPositions =
      (this.options.positions ?? true) &&
      exchange.has['fetchPositions'] === true &&
      exchange.fetchPositions !== undefined;
    const positions = wantPositions
      ? await this.call('fetchPositions', () => exchange.fetchPositions?.() ?? Promise.resolve([]))
      : [];
    request.signal?.throwIfAborted();
    return toState(balances, positions, request.quoteCurrency);
  }

  private assertLive(asOf: number): void {
    const now = this.now();
    const minutes = (ms: number): number => Math.round(ms / 60_000);
    if (Math.abs(now - asOf) <= this.options.toleranceMs) return;
    const when = now > asOf ? `${minutes(now - asOf)} min before now` : 'in the future';
    throw new AccountSourceError(
      'INVALID_STEP_INPUTS',
      `a live exchange account has no history: the run's asOf ${new Date(asOf).toISOString()} is ${when}, beyond the ${minutes(this.options.toleranceMs)} min tolerance (TDA_ACCOUNT_LIVE_TOLERANCE_MINUTES); use a paper account for past moments`,
      {
        details: {
          exchange: this.exchange,
          asOf: new Date(asOf).toISOString(),
          toleranceMinutes: minutes(this.options.toleranceMs),
        },
        retryable: false,
      },
    );
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw mapAccountError(error, this.exchange, operation);
    }
  }
}

/**
 * A ccxt failure of an account call as UPSTREAM_UNAVAILABLE: retryable for NetworkError and its
 * subclasses (timeouts, rate limits, maintenance), not for the rest (AuthenticationError,
 * PermissionDenied, ExchangeError: asking again gets the same answer). Only the class name is
 * kept; anything that is not a ccxt error is returned unchanged (a bug of ours).
 */
export function mapAccountError(error: unknown, exchange: string, operation: string): unknown {
  const classes = ccxtErrorClasses(error);
  const [errorClass] = classes;
  if (errorClass === undefined) return error;
  const transient = classes.includes('NetworkError');
  const refused = classes.includes('AuthenticationError') || classes.includes('PermissionDenied');
  const what = transient
    ? 'is unavailable'
    : refused
      ? 'refused the configured credentials'
      : 'answered with an error';
  return new AccountSourceError(
    'UPSTREAM_UNAVAILABLE',
    `exchange ${exchange} ${what} (${errorClass} during ${operation})`,
    { details: { exchange, operation, errorClass }, retryable: transient },
  );
}

function amount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function balanceOf(balances: CcxtBalancesLike, code: string): { free: number; total: number } {
  const entry = (balances[code] ?? {}) as CcxtBalanceLike;
  const free = amount(entry.free);
  const total = Math.max(amount(entry.total), free + amount(entry.used));
  return { free, total };
}

function toState(
  balances: CcxtBalancesLike,
  raw: readonly CcxtPositionLike[],
  quote: string,
): ExchangeAccountState {
  const cash = balanceOf(balances, quote);
  const holdings: AccountStatePosition[] = [];
  let skippedHoldings = 0;
  const codes = Object.keys(balances)
    .filter((code) => !BALANCE_META_KEYS.has(code) && code !== quote)
    .sort();
  for (const code of codes) {
    const { total } = balanceOf(balances, code);
    if (total <= 0) continue;
    if (!CURRENCY.test(code)) {
      skippedHoldings += 1;
      continue;
    }
    holdings.push({ symbol: `${code}-${quote}`, side: 'long', size: total, origin: 'holding' });
  }
  // Exchanges list flat markets too (contracts 0): those are no position at all.
  const open = raw.filter((p) => Math.abs(p.contracts ?? 0) > 0);
  const derivatives = open.map((p) => derivativeOf(p, quote));
  const positions = [
    ...holdings,
    ...derivatives.filter((p): p is AccountStatePosition => p !== undefined),
  ];
  const skippedPositions =
    derivatives.filter((p) => p === undefined).length +
    Math.max(0, positions.length - MAX_POSITIONS);
  const notes = {
    ...(skippedHoldings > 0 ? { skippedHoldings } : {}),
    ...(skippedPositions > 0 ? { skippedPositions } : {}),
  };
  return {
    quoteCurrency: quote,
    cash: cash.free,
    reservedCash: cash.total - cash.free,
    positions: positions.slice(0, MAX_POSITIONS),
    notes,
  };
}

const UNIFIED_SYMBOL = /^([A-Z0-9]{2,20})\/([A-Z0-9]{2,20})(?::([A-Z0-9]{2,20}))?$/;

/** A linear position settled in the quote currency, or undefined (left out, counted). */
function derivativeOf(position: CcxtPositionLike, quote: string): AccountStatePosition | undefined {
  const match = UNIFIED_SYMBOL.exec(position.symbol ?? '');
  if (match === null) return undefined;
  const [, base = '', positionQuote, settle] = match;
  if (positionQuote !== quote || (settle !== undefined && settle !== quote)) return undefined;
  const contracts = Math.abs(position.contracts ?? 0);
  const size = contracts * (position.contractSize ?? 1);
  const side = position.side;
  const entry = position.entryPrice;
  if (!(size > 0) || (side !== 'long' && side !== 'short')) return undefined;
  if (entry === undefined || !(entry > 0)) return undefined;
  return { symbol: `${base}-${quote}`, side, size, averageEntry: entry, origin: 'derivative' };
}
