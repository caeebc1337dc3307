import { validate, type AccountSnapshot } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from './step-type.descriptor';

const HOUR = 3_600_000;
/** Bucket lengths of the timeframes a mark price may come from (ACCOUNT_EXPORT reads 1h). */
const BUCKET_MS: Readonly<Record<string, number>> = {
  '1h': HOUR,
  '4h': 4 * HOUR,
  '1d': 24 * HOUR,
  '1w': 168 * HOUR,
};

/** Equal up to the rounding of the artifact (amounts to 1e-8, fractions and percents to 1e-6). */
function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-6 + 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

function positionProblem(
  snapshot: AccountSnapshot,
  index: number,
  prices: ReadonlyMap<string, number>,
): string | undefined {
  const p = snapshot.positions[index];
  if (p === undefined) return undefined;
  const where = `positions[${index}] (${p.symbol})`;
  const sign = p.side === 'long' ? 1 : -1;
  if (!near(p.marketValue, p.size * p.markPrice))
    return `${where}: marketValue is not size × markPrice`;
  if (!near(p.unrealizedPnl, sign * (p.markPrice - p.averageEntry) * p.size)) {
    return `${where}: unrealizedPnl does not follow from entry, mark and side`;
  }
  if (
    p.unrealizedPnlPct !== undefined &&
    !near(p.unrealizedPnlPct, (p.unrealizedPnl / (p.averageEntry * p.size)) * 100)
  ) {
    return `${where}: unrealizedPnlPct is not unrealizedPnl over the entry value`;
  }
  const fraction = snapshot.equity > 0 ? p.marketValue / snapshot.equity : 0;
  if (p.fractionOfEquity !== undefined && !near(p.fractionOfEquity, fraction)) {
    return `${where}: fractionOfEquity is not marketValue / equity`;
  }
  if (snapshot.prices !== undefined && prices.get(p.symbol) !== p.markPrice) {
    return `${where}: markPrice is not the symbol's price in prices`;
  }
  return undefined;
}

function pricesProblem(snapshot: AccountSnapshot): string | undefined {
  const asOf = Date.parse(snapshot.asOf);
  const seen = new Set<string>();
  for (const [index, price] of (snapshot.prices ?? []).entries()) {
    if (seen.has(price.symbol)) return `prices[${index}]: a second price for ${price.symbol}`;
    seen.add(price.symbol);
    const length = BUCKET_MS[price.timeframe];
    if (length === undefined || Date.parse(price.candleOpenTime) + length > asOf) {
      return `prices[${index}] (${price.symbol}): not a complete ${price.timeframe} candle ending by asOf ${snapshot.asOf}`;
    }
  }
  return undefined;
}

/**
 * What account_snapshot.schema.json cannot say: every position's value, P&L and fraction follow
 * from its size, entry and mark; marks are complete candles that ended by asOf, one per symbol;
 * and a paper account's equity is its cash plus long minus short market values (an exchange
 * account adds reserved quote and derivative P&L, which the artifact does not itemize).
 */
export function accountSnapshotProblem(snapshot: AccountSnapshot): string | undefined {
  const problem = pricesProblem(snapshot);
  if (problem !== undefined) return problem;
  const prices = new Map((snapshot.prices ?? []).map((p) => [p.symbol, p.price]));
  for (const index of snapshot.positions.keys()) {
    const found = positionProblem(snapshot, index, prices);
    if (found !== undefined) return found;
  }
  if (snapshot.source.provider === 'paper') {
    const net = snapshot.positions.reduce(
      (sum, p) => sum + (p.side === 'long' ? p.marketValue : -p.marketValue),
      snapshot.freeCash,
    );
    if (!near(snapshot.equity, net)) {
      return 'equity is not freeCash + long market values - short market values';
    }
  }
  return undefined;
}

/**
 * ACCOUNT_EXPORT: an account's state at the run's asOf — a paper account (accounts/{accountId})
 * or the configured live exchange account — valued at the last complete 1h close at or before
 * asOf. No upstream: it runs beside the reports and LLM_RECOMMENDATION reads its snapshot.
 */
export const ACCOUNT_EXPORT_STEP = defineStepType({
  stepType: 'ACCOUNT_EXPORT',
  service: 'worker-account-export',
  description:
    'An account (paper, or a live exchange account through ccxt) at asOf: cash, positions marked at the last 1h close, equity, P&L and risk limits.',
  inputsContract: 'account_export_inputs',
  inputs: validate.accountExportInputs,
  artifact: {
    contract: 'account_snapshot',
    validate: validate.accountSnapshot,
    identity: (a) => ({ runId: a.runId, stepId: a.stepId }),
    check: accountSnapshotProblem,
  },
  upstream: {},
  policy: DEFAULT_STEP_POLICY,
  deploy: {
    kind: 'Service',
    why:
      'ACCOUNT_EXPORT steps take seconds (one account read and a few candles): a request-driven ' +
      'Service fed by Pub/Sub push scales to zero; a failed request (5xx) is redelivered.',
    cpu: '1',
    memory: '512Mi',
    concurrency: 8,
    timeoutSeconds: 300,
    minInstances: 0,
    maxInstances: 5,
    needs: ['exchange-account'],
  },
});
