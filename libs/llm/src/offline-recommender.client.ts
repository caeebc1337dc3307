import { createHash } from 'node:crypto';
import { validate, type AccountSnapshot } from '@tda/contracts';
import { positionFacts } from '@tda/step-types';
import { LlmCallError, type LlmClient, type LlmRequest, type LlmResponse } from './llm-client.port';
import { conformToSchema } from './offline-analyst.client';
import { withOfflineNews } from './offline-news';
import { buildOfflineRecommendation, type ReportView } from './offline-recommendation';

export const OFFLINE_RECOMMENDER_MODEL_VERSION = 'offline-recommender-v1';

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return allowed.find((a) => a === value);
}

function prices(levels: unknown): number[] {
  if (!Array.isArray(levels)) return [];
  return levels
    .map((level) => asObject(level)?.['price'])
    .filter((p): p is number => typeof p === 'number' && Number.isFinite(p) && p > 0);
}

/** What the recommender reads of an llm_report_file (llm_report_output_v1 details), tolerantly. */
export function reportView(
  reportId: string,
  timeframe: string | undefined,
  file: unknown,
): ReportView {
  const details = asObject(asObject(asObject(file)?.['output'])?.['details']);
  const trend = asObject(details?.['trend']);
  const levels = asObject(details?.['keyLevels']);
  const view: ReportView = {
    reportId,
    supports: prices(levels?.['support']),
    resistances: prices(levels?.['resistance']),
  };
  if (timeframe !== undefined) view.timeframe = timeframe;
  const direction = oneOf(trend?.['direction'], ['bullish', 'bearish', 'sideways'] as const);
  const strength = oneOf(trend?.['strength'], ['weak', 'moderate', 'strong'] as const);
  const bias = oneOf(asObject(details?.['outlook'])?.['bias'], [
    'bullish',
    'bearish',
    'neutral',
  ] as const);
  if (direction !== undefined) view.direction = direction;
  if (strength !== undefined) view.strength = strength;
  if (bias !== undefined) view.bias = bias;
  return view;
}

function refuse(message: string, details: Record<string, unknown> = {}): never {
  throw new LlmCallError('LLM_PROFILE_INVALID', message, false, details);
}

/**
 * The deterministic offline recommender (provider 'offline'): the LLM_RECOMMENDATION worker's
 * client when no Gemini key or Vertex project is configured. It computes the recommendation from
 * request.context.recommendation (the parsed reports with their reportIds, the account snapshot,
 * the last close at asOf and the risk limits) with buildOfflineRecommendation, and answers like a
 * provider: the JSON as candidates[0].parts[0].text, finishReason STOP, no token usage, modelVersion
 * offline-recommender-v1. The same request always gives the same bytes (a repair call too).
 */
export class OfflineRecommenderClient implements LlmClient {
  readonly provider = 'offline' as const;

  async generate(request: LlmRequest): Promise<LlmResponse> {
    const context = request.context;
    const reco = context?.recommendation;
    if (context === undefined || reco === undefined || reco.reports.length === 0) {
      refuse(
        'the offline recommender needs request.context.recommendation with at least one report',
      );
    }
    let account: AccountSnapshot | undefined;
    if (reco.account !== undefined) {
      const checked = validate.accountSnapshot(reco.account);
      if (!checked.ok) {
        refuse('the offline recommender needs a valid account_snapshot', {
          issues: checked.issues.slice(0, 5).map((i) => ({ path: i.path, keyword: i.keyword })),
        });
      }
      account = checked.value;
    }
    const built = buildOfflineRecommendation({
      symbol: context.symbol,
      lastClose: reco.lastClose,
      reports: reco.reports.map((r) => reportView(r.reportId, r.timeframe, r.report)),
      position: positionFacts(account, context.symbol),
      riskLimits: reco.riskLimits,
      hasAccount: account !== undefined,
    });
    const recommendation = withOfflineNews(built, reco.news);
    const schema = request.generationConfig.responseJsonSchema;
    const output = schema === undefined ? recommendation : conformToSchema(recommendation, schema);
    const text = JSON.stringify(output);
    return {
      candidates: [{ finishReason: 'STOP', parts: [{ text }] }],
      text,
      // No model ran, so no token counts (zeros would read as a measured, free model call).
      modelVersion: OFFLINE_RECOMMENDER_MODEL_VERSION,
      responseId: `offline-${createHash('sha256').update(text).digest('hex').slice(0, 24)}`,
    };
  }
}
