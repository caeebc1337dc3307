import { validate, type OhlcvExport } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from './step-type.descriptor';

/** What ohlcv_export.schema.json cannot say: candle order, counts, OHLC consistency. */
export function ohlcvExportProblem(ohlcv: OhlcvExport): string | undefined {
  if (ohlcv.candleCount !== ohlcv.candles.length) {
    return `candleCount ${ohlcv.candleCount} but ${ohlcv.candles.length} candles`;
  }
  let previous = Number.NEGATIVE_INFINITY;
  for (const [index, c] of ohlcv.candles.entries()) {
    const time = Date.parse(c.openTime);
    if (!(time > previous)) return `candles[${index}] is not after the previous candle`;
    previous = time;
    if (c.high < Math.max(c.open, c.close) || c.low > Math.min(c.open, c.close)) {
      return `candles[${index}] has high/low outside open/close`;
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
