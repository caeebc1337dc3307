import { validate } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from './step-type.descriptor';

/** CHART_EXPORT: PNG charts of an OHLCV export and their manifest (seed 000 partial success). */
export const CHART_EXPORT_STEP = defineStepType({
  stepType: 'CHART_EXPORT',
  service: 'worker-chart-export',
  description: 'PNG charts (candles, volume, EMA, Bollinger, RSI/MACD) of one OHLCV export.',
  inputsContract: 'chart_export_inputs',
  inputs: validate.chartExportInputs,
  artifact: {
    contract: 'charts_manifest',
    validate: validate.chartsManifest,
    identity: (a) => ({ runId: a.runId, stepId: a.stepId, timeframe: a.timeframe }),
  },
  upstream: {
    ohlcv: { field: 'ohlcvStepId', stepType: 'OHLCV_EXPORT', sameTimeframe: true },
  },
  policy: DEFAULT_STEP_POLICY,
  deploy: {
    kind: 'Service',
    why:
      'CHART_EXPORT steps take seconds: a request-driven Service fed by Pub/Sub push scales to ' +
      'zero and is billed per request; a failed request (5xx) is redelivered by Pub/Sub.',
    // Chart rendering (ECharts SVG -> resvg PNG) is CPU and memory heavy: few requests per instance.
    cpu: '1',
    memory: '1Gi',
    concurrency: 2,
    timeoutSeconds: 300,
    minInstances: 0,
    maxInstances: 10,
    // Charts are drawn with the npm font package (deterministic PNG bytes, no system fonts).
    runtimeDependencies: ['dejavu-fonts-ttf'],
  },
});
