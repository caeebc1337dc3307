import { scopeSchema } from './scope-schema';
import { ACCOUNT_ID_PATTERN, type LlmProfile, type RunScope, type Timeframe } from '@tda/contracts';
import { FlowRunInvalidError, InvalidRequestError } from '../errors';
import { buildStepId, modelVariant } from '../ids';
import type { FlowDefinition, StepSpecs } from './flow-definition';
import {
  addTimeframeReport,
  llmReportProfile,
  readReportSettings,
  REPORT_SCOPE_FIELDS,
  reportScope,
  type ReportSettings,
} from './report-steps';
import { assertKnownKeys, readTimeframes } from './scope';

export const RECOMMENDATION_FLOW_KEY = 'recommendation_with_account_v1';
/** A swing horizon: the weekly picture for context, the daily for structure, 4h for timing. */
export const DEFAULT_RECOMMENDATION_TIMEFRAMES: readonly Timeframe[] = ['1w', '1d', '4h'];
export const RECOMMENDATION_REPORT_PROMPT_ID = 'prompt_multi_tf_v1';
export const RECOMMENDATION_PROMPT_ID = 'prompt_reco_v1';
export const LLM_RECOMMENDATION_OUTPUT_SCHEMA_ID = 'llm_recommendation_output_v1';

function readAccountId(scope: RunScope): string {
  const raw: unknown = scope['accountId'];
  if (typeof raw !== 'string' || !ACCOUNT_ID_PATTERN.test(raw)) {
    throw new InvalidRequestError(
      'scope.accountId must name the account to size against (e.g. demo)',
      { field: 'scope.accountId', pattern: ACCOUNT_ID_PATTERN.source },
    );
  }
  return raw;
}

export function resolveRecommendationScope(scope: RunScope): RunScope {
  assertKnownKeys(scope, [...REPORT_SCOPE_FIELDS, 'accountId']);
  const timeframes = readTimeframes(scope, DEFAULT_RECOMMENDATION_TIMEFRAMES);
  return {
    ...reportScope(readReportSettings(scope), timeframes),
    accountId: readAccountId(scope),
  };
}

/** The recommendation's profile: the report profile with the recommendation output schema. */
export function llmRecommendationProfile(settings: ReportSettings): LlmProfile {
  return {
    ...llmReportProfile(settings),
    structuredOutput: { schemaId: LLM_RECOMMENDATION_OUTPUT_SCHEMA_ID },
  };
}

/**
 * Flow 4 (seed 001): the reports of flow 2 (OHLCV -> charts -> report per timeframe, longest
 * first, each report reading the next longer one) plus `account_export`, and one
 * `llm_reco:prompt_reco_v1:model_<model>` that depends on every report, the account snapshot and
 * the shortest timeframe's OHLCV (whose last close at asOf anchors the levels).
 */
export const recommendationWithAccountFlow: FlowDefinition = {
  flowKey: RECOMMENDATION_FLOW_KEY,
  description:
    'A recommendation for one symbol sized against an account: reports per timeframe + account snapshot -> LLM recommendation.',
  scopeSchema: scopeSchema([...REPORT_SCOPE_FIELDS, 'accountId'], {
    required: ['symbol', 'accountId'],
    timeframes: DEFAULT_RECOMMENDATION_TIMEFRAMES,
  }),
  resolveScope: resolveRecommendationScope,
  build: (scope) =>
    buildRecommendationSteps(scope, { reports: { promptId: RECOMMENDATION_REPORT_PROMPT_ID } }),
};

/** How a recommendation run asks its LLM steps (flow 4: prompt_multi_tf_v1 and prompt_reco_v1). */
export interface RecommendationFlowOptions {
  reports: { promptId: string; outputSchemaId?: string };
  recommendation?: { promptId: string; outputSchemaId: string };
  /** Flow 6: a `news_export` step whose headlines the recommendation reads (untrusted text). */
  news?: boolean;
}

/**
 * The steps of flow 4 (and of the flows built on it): the reports per timeframe, the account
 * snapshot (and in flow 6 the news export) and the recommendation.
 */
export function buildRecommendationSteps(
  scope: RunScope,
  options: RecommendationFlowOptions,
): StepSpecs {
  const resolved = resolveRecommendationScope(scope);
  const settings = readReportSettings(resolved);
  const specs: StepSpecs = {};
  const reportStepIds: string[] = [];
  let shortestOhlcv = '';
  for (const timeframe of resolved.timeframes ?? []) {
    const previous = reportStepIds.slice(-1);
    const { promptId, outputSchemaId } = options.reports;
    const steps = addTimeframeReport(
      specs,
      settings,
      timeframe,
      promptId,
      previous,
      outputSchemaId,
    );
    reportStepIds.push(steps.reportStepId);
    shortestOhlcv = steps.ohlcvStepId;
  }
  const accountStepId = buildStepId({ stepType: 'ACCOUNT_EXPORT' });
  specs[accountStepId] = {
    stepType: 'ACCOUNT_EXPORT',
    dependsOn: [],
    inputs: { accountId: readAccountId(resolved), symbol: settings.symbol },
  };
  let newsStepId: string | undefined;
  if (options.news === true) {
    newsStepId = buildStepId({ stepType: 'NEWS_EXPORT' });
    specs[newsStepId] = {
      stepType: 'NEWS_EXPORT',
      dependsOn: [],
      inputs: { symbol: settings.symbol },
    };
  }
  addRecommendation(specs, settings, options, {
    ohlcvStepId: shortestOhlcv,
    reportStepIds,
    accountStepId,
    ...(newsStepId === undefined ? {} : { newsStepId }),
  });
  return specs;
}

/** The recommendation step: it depends on every input it names. */
function addRecommendation(
  specs: StepSpecs,
  settings: ReportSettings,
  options: RecommendationFlowOptions,
  refs: {
    ohlcvStepId: string;
    reportStepIds: string[];
    accountStepId: string;
    newsStepId?: string;
  },
): void {
  const [firstReport, ...laterReports] = refs.reportStepIds;
  if (firstReport === undefined) {
    throw new FlowRunInvalidError('a recommendation needs at least one report', {
      flowKey: RECOMMENDATION_FLOW_KEY,
    });
  }
  const promptId = options.recommendation?.promptId ?? RECOMMENDATION_PROMPT_ID;
  const profile = llmRecommendationProfile(settings);
  const recoStepId = buildStepId({
    stepType: 'LLM_RECOMMENDATION',
    variant: [promptId, modelVariant(settings.modelName)],
  });
  const news = refs.newsStepId === undefined ? [] : [refs.newsStepId];
  specs[recoStepId] = {
    stepType: 'LLM_RECOMMENDATION',
    dependsOn: [refs.ohlcvStepId, ...refs.reportStepIds, refs.accountStepId, ...news],
    inputs: {
      ohlcvStepId: refs.ohlcvStepId,
      reportStepIds: [firstReport, ...laterReports],
      accountStepId: refs.accountStepId,
      ...(refs.newsStepId === undefined ? {} : { newsStepId: refs.newsStepId }),
      llm: {
        promptId,
        llmProfile: {
          ...profile,
          structuredOutput: {
            schemaId: options.recommendation?.outputSchemaId ?? LLM_RECOMMENDATION_OUTPUT_SCHEMA_ID,
          },
        },
      },
    },
  };
}
