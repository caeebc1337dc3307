import type { FlowRun, FlowStep, LlmRecommendationFile, LlmReportFile } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { reportIdFor } from '@tda/flow-engine';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';

/** Fixtures of the reports/recommendations index tests: a run with finished LLM steps. */

export const REPORT_STEP = 'llm_report:1d:prompt_multi_tf_v1:model_gemini_2_5_flash';
export const RECO_STEP = 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash';
export const RUN_AS_OF = '2026-09-20T00:00:00Z';

export function artifactUriOf(runId: string, stepId: string): string {
  return `gs://tda-artifacts/runs/${runId}/${stepId}.json`;
}

/** The contract example report, as the file of (runId, stepId). */
export function reportFileFor(
  runId: string,
  stepId: string,
  markdown = '## BTC-USDT daily: higher lows above the weekly pivot\n\nBody.',
  timeframe: LlmReportFile['metadata']['timeframe'] = '1d',
): LlmReportFile {
  const example = loadExample('llm_report_file.example.json') as LlmReportFile;
  return {
    metadata: { ...example.metadata, runId, stepId, symbol: 'BTC-USDT', timeframe },
    output: { ...example.output, summary: { markdown } },
  };
}

/** A valid recommendation file of (runId, stepId) resting on the given report steps. */
export function recommendationFileFor(
  runId: string,
  stepId: string,
  reportStepIds: readonly [string, ...string[]] = [REPORT_STEP],
): LlmRecommendationFile {
  const [first, ...rest] = reportStepIds;
  const reportOf = (reportStep: string) => ({
    reportId: reportIdFor(runId, reportStep),
    stepId: reportStep,
    gcsUri: artifactUriOf(runId, reportStep),
  });
  const citationOf = (reportStep: string) => ({
    reportId: reportIdFor(runId, reportStep),
    claim: 'up',
  });
  return {
    metadata: {
      schemaVersion: 1,
      runId,
      stepId,
      symbol: 'BTC-USDT',
      asOf: RUN_AS_OF,
      lastClose: 81249.99,
      promptId: 'prompt_reco_v1',
      schemaId: 'llm_recommendation_output_v1',
      modelName: 'gemini-2.5-flash',
      provider: 'offline',
      inputs: {
        ohlcvGcsUri: artifactUriOf(runId, 'ohlcv_export:4h'),
        reports: [reportOf(first), ...rest.map(reportOf)],
        accountId: 'demo',
      },
      llm: { finishReason: 'STOP', attempts: { total: 1 } },
    },
    output: {
      action: 'BUY',
      signal_strength: 0.62,
      headline: 'Trend resumes\u001b[31m above the weekly pivot',
      entry: { low: 80500, high: 81300 },
      stopLoss: 77800,
      takeProfit: [84500, 88000],
      size: { fractionOfEquity: 0.05 },
      horizon: { days: 14, label: '1-2 weeks' },
      rationale: {
        summary: 'Daily trend up.',
        citations: [citationOf(first), ...rest.map(citationOf)],
      },
      risks: ['A weekly close below 77,800 invalidates the idea.'],
    },
  };
}

function succeeded(runId: string, stepId: string, overrides: Partial<FlowStep>): FlowStep {
  return makeStep({
    status: 'SUCCEEDED',
    attempt: 1,
    finishedAt: '2026-09-20T00:06:01.250Z',
    outputs: { gcs_uri: artifactUriOf(runId, stepId) },
    ...overrides,
  });
}

/**
 * A flow-4-like run (owner alice, asOf RUN_AS_OF) whose LLM_REPORT and LLM_RECOMMENDATION steps
 * SUCCEEDED with an artifact each (the files are not stored: see reportFileFor).
 */
export function runWithLlmSteps(overrides: Partial<FlowRun> & { suffix?: string } = {}): FlowRun {
  const base = makeFlowRun({
    flowKey: 'recommendation_with_account_v1',
    status: 'SUCCEEDED',
    ownerId: 'alice',
    createdAt: '2026-09-20T00:05:12.000Z',
    scope: { symbol: 'BTC-USDT', asOf: RUN_AS_OF, accountId: 'demo' },
    ...overrides,
  });
  const runId = base.runId;
  return {
    ...base,
    steps: {
      'ohlcv_export:1d': succeeded(runId, 'ohlcv_export:1d', {}),
      [REPORT_STEP]: succeeded(runId, REPORT_STEP, {
        stepType: 'LLM_REPORT',
        dependsOn: ['ohlcv_export:1d'],
        inputs: {
          ohlcvStepId: 'ohlcv_export:1d',
          chartsManifestStepId: 'ohlcv_export:1d',
          llm: { promptId: 'prompt_multi_tf_v1', llmProfile: { modelName: 'gemini-2.5-flash' } },
        },
      }),
      [RECO_STEP]: succeeded(runId, RECO_STEP, {
        stepType: 'LLM_RECOMMENDATION',
        timeframe: undefined,
        dependsOn: ['ohlcv_export:1d', REPORT_STEP],
        finishedAt: '2026-09-20T00:07:31.204Z',
        inputs: {
          ohlcvStepId: 'ohlcv_export:1d',
          reportStepIds: [REPORT_STEP],
          llm: { promptId: 'prompt_reco_v1', llmProfile: { modelName: 'gemini-2.5-flash' } },
        },
      }),
      ...overrides.steps,
    },
  };
}
