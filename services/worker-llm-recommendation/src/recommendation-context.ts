import {
  validate,
  type AccountSnapshot,
  type AppliedRiskLimits,
  type LlmReportFile,
  type OhlcvExport,
  type Timeframe,
} from '@tda/contracts';
import { reportIdFor } from '@tda/flow-engine';
import type { AssembledPrompt, LlmCallPlan, LlmStepRuntime, OutputCheck } from '@tda/llm';
import {
  appliedRiskLimits,
  type LLM_RECOMMENDATION_STEP,
  positionFacts,
  recommendationOutputViolations,
  type RecommendationFacts,
} from '@tda/step-types';
import { StepInputError, type StepContext, type UpstreamArtifact } from '@tda/worker-kit';

type Context = StepContext<typeof LLM_RECOMMENDATION_STEP>;

/** An input report: its artifact and the reportId the model may cite it by. */
export interface RecommendationReport {
  reportId: string;
  stepId: string;
  timeframe?: Timeframe;
  uri: string;
  json: Buffer;
}

/** The price anchor of a recommendation (see marketAt). */
export type RecommendationMarket = ReturnType<typeof marketAt>;

/** The account snapshot the inputs name, checked (see accountOf). */
export type RecommendationAccount = NonNullable<ReturnType<typeof accountOf>>;

/** What the model is asked, the check of its answer, and what the file records of the inputs. */
export interface PreparedRecommendation {
  assembled: AssembledPrompt;
  /** The domain invariants (citations, price levels, risk limits) on a schema-valid output. */
  check: OutputCheck;
  market: RecommendationMarket;
  riskLimits: AppliedRiskLimits;
  ohlcvUri: string;
  reports: RecommendationReport[];
  account: RecommendationAccount | undefined;
  /** Flow 6: the news export given as untrusted text, when the inputs name one. */
  newsUri: string | undefined;
}

/**
 * The recommendation's context, read through the harness's upstream reader: its reports (each
 * with the reportId it may be cited by), the last close at asOf from the OHLCV export and, when
 * the inputs name one, the account snapshot with its risk limits (else the default limits).
 */
export async function prepareRecommendation(
  runtime: LlmStepRuntime,
  plan: LlmCallPlan,
  context: Context,
): Promise<PreparedRecommendation> {
  const { run, stepId } = context;
  const symbol = run.scope.symbol;
  const ohlcv = await context.upstream('ohlcv');
  const reports = (await context.upstream('reports')).map((report) =>
    recommendationReportOf(run.runId, report),
  );
  const market = marketAt(run.scope.asOf, ohlcv);
  const account = accountOf(await context.upstream('account'), market.asOf);
  const riskLimits = appliedRiskLimits(account?.snapshot);
  const news = await context.upstream('news');
  const assembled = runtime.assembleRecommendation(plan, {
    identity: { runId: run.runId, stepId, symbol },
    market,
    reports,
    ...(account === undefined
      ? {}
      : {
          account: {
            accountId: account.snapshot.accountId,
            uri: account.uri,
            json: account.bytes,
          },
        }),
    ...(news === undefined ? {} : { news: { uri: news.uri, json: news.bytes } }),
    riskLimits,
  });
  const facts: RecommendationFacts = {
    lastClose: market.lastClose,
    reportIds: reports.map((r) => r.reportId),
    riskLimits,
    position: positionFacts(account?.snapshot, symbol),
    newsUrls: news === undefined ? null : news.artifact.items.map((item) => item.url),
  };
  const check: OutputCheck = (output) => recommendationOutputViolations(output, facts);
  const newsUri = news?.uri;
  return { assembled, check, market, riskLimits, ohlcvUri: ohlcv.uri, reports, account, newsUri };
}

/** The reportId is the one the orchestrator indexes the report under (seed 001). */
function recommendationReportOf(
  runId: string,
  report: UpstreamArtifact<LlmReportFile>,
): RecommendationReport {
  const { timeframe } = report.artifact.metadata;
  return {
    reportId: reportIdFor(runId, report.stepId),
    stepId: report.stepId,
    ...(timeframe === undefined ? {} : { timeframe }),
    uri: report.uri,
    json: report.bytes,
  };
}

/** Two RFC 3339 strings naming the same instant (formats may differ: `Z` vs `.000Z`). */
function sameInstant(a: string, b: string): boolean {
  return Date.parse(a) === Date.parse(b);
}

/**
 * asOf (the run's scope.asOf, else the OHLCV export's) and the last close at or before it: the
 * close of the export's last candle that opened before asOf. A still-forming candle counts: the
 * export built it only from data that had ended by asOf, so its close is the price at asOf.
 */
export function marketAt(
  scopeAsOf: string | undefined,
  ohlcv: UpstreamArtifact<OhlcvExport>,
): {
  asOf: string;
  lastClose: number;
  ohlcvUri: string;
  timeframe: string;
  candleOpenTime: string;
} {
  const { artifact } = ohlcv;
  if (scopeAsOf !== undefined && !sameInstant(scopeAsOf, artifact.asOf)) {
    throw new StepInputError(
      `the OHLCV export of '${ohlcv.stepId}' is cut at ${artifact.asOf}, the run describes ${scopeAsOf}`,
      { field: 'ohlcvStepId', stepId: ohlcv.stepId },
    );
  }
  const asOf = scopeAsOf ?? artifact.asOf;
  const cut = Date.parse(asOf);
  const last = artifact.candles.filter((c) => Date.parse(c.openTime) < cut).at(-1);
  if (last === undefined) {
    throw new StepInputError(`the OHLCV export of '${ohlcv.stepId}' has no candle before asOf`, {
      field: 'ohlcvStepId',
      stepId: ohlcv.stepId,
    });
  }
  return {
    asOf,
    lastClose: last.close,
    ohlcvUri: ohlcv.uri,
    timeframe: artifact.timeframe,
    candleOpenTime: last.openTime,
  };
}

/**
 * The account snapshot, when the inputs name one: valid against account_snapshot (the harness
 * checked it already when ACCOUNT_EXPORT is registered) and taken at the recommendation's asOf.
 */
function accountOf(
  upstream: UpstreamArtifact<unknown> | undefined,
  asOf: string,
): { snapshot: AccountSnapshot; uri: string; bytes: Buffer } | undefined {
  if (upstream === undefined) return undefined;
  const details = { field: 'accountStepId', stepId: upstream.stepId };
  const checked = validate.accountSnapshot(upstream.artifact);
  if (!checked.ok) {
    const paths = checked.issues.slice(0, 5).map((i) => i.path || '/');
    throw new StepInputError(
      `${upstream.stepId}'s artifact violates account_snapshot.schema.json at ${paths.join(', ')}`,
      details,
    );
  }
  if (!sameInstant(checked.value.asOf, asOf)) {
    throw new StepInputError(
      `the account snapshot of '${upstream.stepId}' is taken at ${checked.value.asOf}, the recommendation describes ${asOf}`,
      details,
    );
  }
  return { snapshot: checked.value, uri: upstream.uri, bytes: upstream.bytes };
}
