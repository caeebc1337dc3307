import { validate } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { llmRecommendationFileProblem } from './llm-recommendation.invariants';
import { defineStepType } from './step-type.descriptor';

/**
 * LLM_RECOMMENDATION (flow 4): one recommendation for the run's symbol from its timeframe reports,
 * the last close at asOf and (optionally) the account snapshot, under the seed 002 LLM step
 * contract. Same budget as LLM_REPORT: 780 s per attempt (a 600 s model request plus a 120 s
 * finalize reserve); every failure after the model was asked is final for the delivery.
 */
export const LLM_RECOMMENDATION_STEP = defineStepType({
  stepType: 'LLM_RECOMMENDATION',
  service: 'worker-llm-recommendation',
  description:
    'A recommendation for the symbol (action, levels, size) from the reports, the last close and the account.',
  inputsContract: 'llm_recommendation_inputs',
  inputs: validate.llmRecommendationInputs,
  artifact: {
    contract: 'llm_recommendation_file',
    validate: validate.llmRecommendationFile,
    identity: (a) => ({ runId: a.metadata.runId, stepId: a.metadata.stepId }),
    check: llmRecommendationFileProblem,
  },
  upstream: {
    ohlcv: { field: 'ohlcvStepId', stepType: 'OHLCV_EXPORT' },
    reports: { field: 'reportStepIds', stepType: 'LLM_REPORT', many: true },
    account: { field: 'accountStepId', stepType: 'ACCOUNT_EXPORT', optional: true },
    // Flow 6: headlines in the run's window, given to the model as untrusted text.
    news: { field: 'newsStepId', stepType: 'NEWS_EXPORT', optional: true },
  },
  policy: { ...DEFAULT_STEP_POLICY, timeoutMs: 780_000 },
  deploy: {
    kind: 'WorkerPool',
    why:
      'LLM_RECOMMENDATION steps run up to 780 s (seed 002) with lease heartbeats: an always-on ' +
      'Worker Pool pulling its subscription keeps CPU for the whole step and is not bound by a ' +
      'request timeout or push ack deadline (max 600 s).',
    cpu: '1',
    memory: '1Gi',
    minInstances: 1,
    maxInstances: 1,
    needs: ['llm'],
  },
});
