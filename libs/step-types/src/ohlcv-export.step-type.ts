import { validate, type OhlcvExport } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from './step-type.descriptor';

/**
 * What ohlcv_export.schema.json cannot say: candle order, counts, OHLC consistency, and no
 * candle after asOf (a complete candle ends at or before asOf; the incomplete one opens before it).
 */
export function ohlcvExportProblem(ohlcv: OhlcvExport): string | undefined {
  if (ohlcv.candleCount !== ohlcv.candles.length) {
    return `candleCount ${ohlcv.candleCount} but ${ohlcv.candles.length} candles`;
  }
  const asOf = Date.parse(ohlcv.asOf);
  // UTC bucket end (exchange buckets: calendar months, fixed lengths otherwise).
  const HOUR = 3_600_000;
  const fixed = { '1h': HOUR, '4h': 4 * HOUR, '1d': 24 * HOUR, '1w': 168 * HOUR } as const;
  const endOf = (open: number): number => {
    if (ohlcv.timeframe !== '1M') return open + fixed[ohlcv.timeframe];
    const d = new Date(open);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  };
  let previous = Number.NEGATIVE_INFINITY;
  for (const [index, c] of ohlcv.candles.entries()) {
    const time = Date.parse(c.openTime);
    if (!(time > previous)) return `candles[${index}] is not after the previous candle`;
    previous = time;
    if (c.high < Math.max(c.open, c.close) || c.low > Math.min(c.open, c.close)) {
      return `candles[${index}] has high/low outside open/close`;
    }
    if (c.complete === false && !(time < asOf)) {
      return `candles[${index}] (${c.openTime}) is incomplete but does not open before asOf ${ohlcv.asOf}`;
    }
    if (c.complete !== false && !(endOf(time) <= asOf)) {
      return `candles[${index}] (${c.openTime}) ends after asOf ${ohlcv.asOf}`;
    }
  }
  return undefined;
}

/** OHLCV_EXPORT: candles of one symbol and timeframe from the configured source. */
export const OHLCV_EXPORT_STEP = defineStepType({
  stepType: 'OHLCV_EXPORT',
  service: 'worker-ohlcv-export',
  description: 'Candles of one symbol and timeframe (bundled datasets or a live exchange).',
  inputsContract: 'ohlcv_export_inputs',
  inputs: validate.ohlcvExportInputs,
  artifact: {
    contract: 'ohlcv_export',
    validate: validate.ohlcvExport,
    identity: (a) => ({ runId: a.runId, stepId: a.stepId, timeframe: a.timeframe }),
    check: ohlcvExportProblem,
  },
  upstream: {},
  policy: DEFAULT_STEP_POLICY,
  deploy: {
    kind: 'Service',
    why:
      'OHLCV_EXPORT steps take seconds: a request-driven Service fed by Pub/Sub push scales to ' +
      'zero and is billed per request; a failed request (5xx) is redelivered by Pub/Sub.',
    cpu: '1',
    memory: '512Mi',
    concurrency: 8,
    timeoutSeconds: 300,
    minInstances: 0,
    maxInstances: 10,
  },
});
