import type { RecommendationIndexEntry, ReportIndexEntry, Timeframe } from '@tda/contracts';
import { recommendationIdFor, reportIdFor } from '@tda/flow-engine';

export const FIXTURE_RUN_ID = '20260920-000512_BTC-USDT_q7r2mx';
export const FIXTURE_AS_OF = '2026-09-20T00:00:00.000Z';

export interface ReportFixtureOptions extends Partial<ReportIndexEntry> {
  /** Distinguishes entries of one run: part of the stepId, so of the reportId. */
  variant?: string;
}

/**
 * A valid reports/{reportId} entry of a 1d report of FIXTURE_RUN_ID; the id follows runId, stepId
 * (reportIdFor) unless given. `timeframe: undefined` in overrides leaves it out.
 */
export function makeReportEntry(options: ReportFixtureOptions = {}): ReportIndexEntry {
  const { variant = 'a', ...overrides } = options;
  const runId = overrides.runId ?? FIXTURE_RUN_ID;
  const timeframe: Timeframe | undefined =
    'timeframe' in overrides ? overrides.timeframe : ('1d' as const);
  const stepId =
    overrides.stepId ?? `llm_report:${timeframe ?? 'multi'}:prompt_multi_tf_v1:model_${variant}`;
  const entry: ReportIndexEntry = {
    schemaVersion: 1,
    reportId: reportIdFor(runId, stepId),
    ownerId: 'alice',
    runId,
    stepId,
    flowKey: 'user_multi_tf_report_v1',
    symbol: 'BTC-USDT',
    symbolKey: 'BTCUSDT',
    asOf: FIXTURE_AS_OF,
    provider: 'offline',
    modelName: 'gemini-2.5-flash',
    promptId: 'prompt_multi_tf_v1',
    headline: 'BTC-USDT daily: higher lows above the weekly pivot',
    bias: 'bullish',
    confidence: 0.6,
    createdAt: '2026-09-20T00:06:01.250Z',
    gcs_uri: `gs://tda-artifacts/runs/${runId}/${timeframe ?? '_'}/${stepId}.json`,
    ...overrides,
  };
  if (timeframe === undefined) delete entry.timeframe;
  else entry.timeframe = timeframe;
  return entry;
}

export interface RecommendationFixtureOptions extends Partial<RecommendationIndexEntry> {
  variant?: string;
}

/** A valid recommendations/{recoId} entry of FIXTURE_RUN_ID (id from recommendationIdFor). */
export function makeRecommendationEntry(
  options: RecommendationFixtureOptions = {},
): RecommendationIndexEntry {
  const { variant = 'a', ...overrides } = options;
  const runId = overrides.runId ?? FIXTURE_RUN_ID;
  const stepId = overrides.stepId ?? `llm_reco:prompt_reco_v1:model_${variant}`;
  return {
    schemaVersion: 1,
    recoId: recommendationIdFor(runId, stepId),
    ownerId: 'alice',
    runId,
    stepId,
    flowKey: 'recommendation_with_account_v1',
    symbol: 'BTC-USDT',
    symbolKey: 'BTCUSDT',
    asOf: FIXTURE_AS_OF,
    accountId: 'demo',
    action: 'BUY',
    signal_strength: 0.62,
    headline: 'Daily uptrend resumes above the weekly pivot',
    provider: 'offline',
    modelName: 'gemini-2.5-flash',
    reportIds: [reportIdFor(runId, 'llm_report:1d:prompt_multi_tf_v1:model_a')],
    createdAt: '2026-09-20T00:07:31.204Z',
    gcs_uri: `gs://tda-artifacts/runs/${runId}/_/${stepId}.json`,
    ...overrides,
  };
}
