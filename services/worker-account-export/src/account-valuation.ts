import type { AccountPosition, AccountSnapshot, MarkPrice, RiskLimits } from '@tda/contracts';
import type { AccountState, AccountStatePosition } from '@tda/accounts';

/** Version of the artifact format (account_snapshot.schema.json schemaVersion). */
export const ACCOUNT_SNAPSHOT_SCHEMA_VERSION = 1;

/** Amounts to 1e-8 (satoshi-sized), so the JSON carries no float noise; fractions to 1e-6. */
export const roundAmount = (value: number): number => Math.round(value * 1e8) / 1e8;
const roundFraction = (value: number): number => Math.round(value * 1e6) / 1e6;

/** A position with the mark it is valued at (averageEntry: the mark when the source has none). */
interface Marked {
  position: AccountStatePosition;
  mark: number;
}

function value(
  position: AccountStatePosition,
  mark: number,
): Omit<AccountPosition, 'fractionOfEquity'> {
  const { symbol, side, size } = position;
  const averageEntry = position.averageEntry ?? mark;
  const sign = side === 'long' ? 1 : -1;
  const unrealizedPnl = roundAmount(sign * (mark - averageEntry) * size);
  return {
    symbol,
    side,
    size,
    averageEntry,
    markPrice: mark,
    marketValue: roundAmount(size * mark),
    unrealizedPnl,
    unrealizedPnlPct: roundFraction((unrealizedPnl / (averageEntry * size)) * 100),
  };
}

/**
 * What a position adds to equity: a paper position or spot holding its market value (a short
 * subtracts it: the proceeds are in cash), a derivative only its unrealized P&L (the collateral
 * is in the quote balance).
 */
function contribution(origin: AccountStatePosition['origin'], valued: AccountPosition): number {
  if (origin === 'derivative') return valued.unrealizedPnl;
  return valued.side === 'long' ? valued.marketValue : -valued.marketValue;
}

export interface SnapshotParts {
  runId: string;
  stepId: string;
  accountId: string;
  asOf: string;
  state: AccountState;
  marked: readonly Marked[];
  prices: readonly MarkPrice[];
}

/**
 * The account_snapshot artifact, keys in schema order (the bytes are reproducible): equity =
 * free cash + reserved quote + each position's contribution; every position's fraction of it.
 */
export function buildSnapshot(parts: SnapshotParts): AccountSnapshot {
  const { state } = parts;
  const valued = parts.marked.map(({ position, mark }) => ({
    origin: position.origin,
    valued: value(position, mark) as AccountPosition,
  }));
  const equity = roundAmount(
    valued.reduce(
      (sum, { origin, valued: v }) => sum + contribution(origin, v),
      state.cash + state.reservedCash,
    ),
  );
  const positions = valued.map(({ valued: v }) => ({
    ...v,
    fractionOfEquity: equity > 0 ? roundFraction(v.marketValue / equity) : 0,
  }));
  return {
    schemaVersion: ACCOUNT_SNAPSHOT_SCHEMA_VERSION,
    runId: parts.runId,
    stepId: parts.stepId,
    accountId: parts.accountId,
    source: orderedSource(state.source),
    asOf: parts.asOf,
    quoteCurrency: state.quoteCurrency,
    equity,
    freeCash: roundAmount(state.cash),
    positions,
    riskLimits: orderedLimits(state.riskLimits),
    prices: [...parts.prices],
  };
}

function orderedSource(source: AccountState['source']): AccountSnapshot['source'] {
  return {
    provider: source.provider,
    ...(source.exchange === undefined ? {} : { exchange: source.exchange }),
    ...(source.updatedAt === undefined ? {} : { updatedAt: source.updatedAt }),
  };
}

function orderedLimits(limits: RiskLimits): RiskLimits {
  return {
    maxPositionFraction: limits.maxPositionFraction,
    ...(limits.maxRiskPerTradeFraction === undefined
      ? {}
      : { maxRiskPerTradeFraction: limits.maxRiskPerTradeFraction }),
  };
}

export function serializeSnapshot(snapshot: AccountSnapshot): Buffer {
  return Buffer.from(`${JSON.stringify(snapshot, null, 2)}\n`, 'utf8');
}
