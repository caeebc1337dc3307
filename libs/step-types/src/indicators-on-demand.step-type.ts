import {
  validate,
  type IndicatorResult,
  type IndicatorValues,
  type Timeframe,
} from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from './step-type.descriptor';

const HOUR = 3_600_000;
const FIXED_MS = { '1h': HOUR, '4h': 4 * HOUR, '1d': 24 * HOUR, '1w': 168 * HOUR } as const;

/** End of the UTC bucket opening at `open` (exchange buckets: calendar months for 1M). */
function bucketEnd(timeframe: Timeframe, open: number): number {
  if (timeframe !== '1M') return open + FIXED_MS[timeframe];
  const d = new Date(open);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

function windowProblem(values: IndicatorValues): string | undefined {
  const { window } = values;
  const [from, last, to] = [window.from, window.lastOpenTime, window.to].map(Date.parse);
  if (!(from !== undefined && last !== undefined && from <= last)) {
    return 'window.from is after window.lastOpenTime';
  }
  if (to !== bucketEnd(values.timeframe, last)) {
    return `window.to is not the end of the ${values.timeframe} candle opening at window.lastOpenTime`;
  }
  if (to > Date.parse(values.asOf)) return `window.to ${window.to} is after asOf ${values.asOf}`;
  return undefined;
}

function resultProblem(values: IndicatorValues, result: IndicatorResult): string | undefined {
  const where = `indicators ${result.label}`;
  const { window } = values;
  if (result.tail.length > values.tailLength) return `${where}: tail longer than tailLength`;
  let previous = Number.NEGATIVE_INFINITY;
  for (const point of result.tail) {
    const time = Date.parse(point.openTime);
    if (!(time > previous)) return `${where}: tail is not in ascending openTime order`;
    previous = time;
    if (time < Date.parse(window.from) || time > Date.parse(window.lastOpenTime)) {
      return `${where}: tail point ${point.openTime} is outside the window`;
    }
    if (Object.keys(point.values).join() !== result.fields.join()) {
      return `${where}: a point's values are not its fields (${result.fields.join(', ')})`;
    }
  }
  if (result.status !== 'ok') return undefined;
  if (window.candles < result.requiredCandles) {
    return `${where}: ok with ${window.candles} candles, fewer than the ${result.requiredCandles} it needs`;
  }
  if (JSON.stringify(result.latest) !== JSON.stringify(result.tail.at(-1))) {
    return `${where}: latest is not the last point of tail`;
  }
  if (result.latest?.openTime !== window.lastOpenTime) {
    return `${where}: latest is not at window.lastOpenTime`;
  }
  return undefined;
}

/**
 * What indicator_values.schema.json cannot say: nothing after asOf (the window's last candle
 * ended by asOf, every point lies in the window), tails in order and within tailLength, points
 * holding exactly their fields, and an 'ok' indicator's latest value at the last candle.
 */
export function indicatorValuesProblem(values: IndicatorValues): string | undefined {
  const problem = windowProblem(values);
  if (problem !== undefined) return problem;
  for (const result of values.indicators) {
    const found = resultProblem(values, result);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * INDICATORS_ON_DEMAND (flow 5): the indicators an LLM step asked for, computed on the run's
 * OHLCV export of one timeframe (complete candles up to asOf); a follow-up LLM step reads them.
 * Inserted at run time by the orchestrator (libs/flow-engine dynamic/expand-indicators.ts).
 */
export const INDICATORS_ON_DEMAND_STEP = defineStepType({
  stepType: 'INDICATORS_ON_DEMAND',
  service: 'worker-indicators',
  description:
    'Indicators an LLM step asked for (RSI, MACD, ATR, Bollinger, EMA, SMA, stochastic, ADX, OBV, VWAP) on one OHLCV export: latest values and a short tail.',
  inputsContract: 'indicators_on_demand_inputs',
  inputs: validate.indicatorsOnDemandInputs,
  artifact: {
    contract: 'indicator_values',
    validate: validate.indicatorValues,
    identity: (a) => ({ runId: a.runId, stepId: a.stepId, timeframe: a.timeframe }),
    check: indicatorValuesProblem,
  },
  upstream: {
    ohlcv: { field: 'ohlcvStepId', stepType: 'OHLCV_EXPORT', sameTimeframe: true },
  },
  // Milliseconds of arithmetic on at most a few thousand candles: a minute covers reading the
  // export and a slow storage write; the follow-up LLM step waits on it.
  policy: { ...DEFAULT_STEP_POLICY, timeoutMs: 60_000 },
  deploy: {
    kind: 'Service',
    why:
      'INDICATORS_ON_DEMAND steps take well under a second (one artifact read, arithmetic, one ' +
      'write): a request-driven Service fed by Pub/Sub push scales to zero between the rare ' +
      'flow-5 expansions; a failed request (5xx) is redelivered by Pub/Sub.',
    cpu: '1',
    memory: '512Mi',
    concurrency: 8,
    timeoutSeconds: 120,
    minInstances: 0,
    maxInstances: 5,
  },
});
