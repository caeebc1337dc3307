import { validate } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { llmReportFileProblem } from './llm-report.invariants';
import { defineStepType } from './step-type.descriptor';

/**
 * LLM_REPORT (seed 002): a chart-backed report from the model, of one timeframe (its OHLCV export
 * and charts upstream, in flow 5 also the indicator values it asked for) or aggregated over
 * existing reports (flow 3: inputs.reportRefs, read by
 * the handler, no upstream steps; hence ohlcv and charts are optional here and the inputs schema
 * requires one of the two shapes). 780 s per attempt (a 600 s model request plus a 120 s finalize
 * reserve). The LLM step runtime retries an unanswered model call itself and marks every failure
 * after the model was asked `final`: the harness's in-process retries only repeat what came before
 * (registry and artifact reads).
 */
export const LLM_REPORT_STEP = defineStepType({
  stepType: 'LLM_REPORT',
  service: 'worker-llm-report',
  description:
    'A structured LLM report of one timeframe from the OHLCV export and its charts, or aggregated over existing reports (flow 3).',
  inputsContract: 'llm_report_inputs',
  inputs: validate.llmReportInputs,
  artifact: {
    contract: 'llm_report_file',
    validate: validate.llmReportFile,
    identity: (a) => ({
      runId: a.metadata.runId,
      stepId: a.metadata.stepId,
      ...(a.metadata.timeframe === undefined ? {} : { timeframe: a.metadata.timeframe }),
    }),
    check: llmReportFileProblem,
  },
  upstream: {
    ohlcv: { field: 'ohlcvStepId', stepType: 'OHLCV_EXPORT', sameTimeframe: true, optional: true },
    charts: {
      field: 'chartsManifestStepId',
      stepType: 'CHART_EXPORT',
      sameTimeframe: true,
      optional: true,
    },
    previousReports: { field: 'previousReportStepIds', stepType: 'LLM_REPORT', many: true },
    // Flow 5: a follow-up report's indicator values (any timeframe of the run).
    indicators: { field: 'indicatorStepIds', stepType: 'INDICATORS_ON_DEMAND', many: true },
  },
  policy: { ...DEFAULT_STEP_POLICY, timeoutMs: 780_000 },
  deploy: {
    kind: 'WorkerPool',
    why:
      'LLM_REPORT steps run up to 780 s (seed 002) with lease heartbeats: an always-on Worker ' +
      'Pool pulling its subscription keeps CPU for the whole step and is not bound by a request ' +
      'timeout or push ack deadline (max 600 s).',
    cpu: '1',
    memory: '1Gi',
    minInstances: 1,
    maxInstances: 1,
    needs: ['llm'],
  },
});
