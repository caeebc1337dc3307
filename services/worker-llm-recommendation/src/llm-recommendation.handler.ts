import {
  validate,
  type AccountSnapshot,
  type LlmRecommendationFile,
  type OhlcvExport,
  type Timeframe,
} from '@tda/contracts';
import { recommendationIdFor, reportIdFor } from '@tda/flow-engine';
import type { LlmStepRuntime, OutputCheck } from '@tda/llm';
import {
  appliedRiskLimits,
  LLM_RECOMMENDATION_STEP,
  positionFacts,
  recommendationOutputViolations,
  type RecommendationFacts,
} from '@tda/step-types';
import {
  StepError,
  StepInputError,
  type ExistingArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
  type UpstreamArtifact,
} from '@tda/worker-kit';
import {
  buildRecommendationFile,
  executionMetadataOf,
  serializeRecommendation,
} from './llm-recommendation-file';

type Context = StepContext<typeof LLM_RECOMMENDATION_STEP>;

/**
 * LLM_RECOMMENDATION (flow 4): one recommendation for the run's symbol from its timeframe reports
 * (each given to the model with the reportId it may cite), the last close at asOf (from the OHLCV
 * export) and, when the inputs name one, the account snapshot (position, risk limits). The LLM
 * step runtime does the seed 002 part (pre-flight, prompt assembly with the size limits, the
 * structured-output pipeline within the time budget); the pipeline's check runs the contract and
 * the domain invariants on every schema-valid answer, so a broken rule is repaired once, then
 * INVALID_STRUCTURED_OUTPUT. Nothing of the prompt, the account or the model output reaches logs,
 * errors or the run document.
 */
export class LlmRecommendationHandler implements StepHandler<typeof LLM_RECOMMENDATION_STEP> {
  readonly descriptor = LLM_RECOMMENDATION_STEP;

  constructor(readonly runtime: LlmStepRuntime) {}

  async execute(context: Context): Promise<StepResult> {
    const { run, stepId, inputs, signal } = context;
    const symbol = run.scope.symbol;
    context.heartbeat({ stage: 'resolve_profile' });
    const plan = await this.runtime.plan(inputs.llm);
    context.heartbeat({ stage: 'read_context' });
    const ohlcv = await context.upstream('ohlcv');
    const reports = (await context.upstream('reports')).map((report) => {
      const { timeframe } = report.artifact.metadata;
      return {
        reportId: reportIdFor(run.runId, report.stepId),
        stepId: report.stepId,
        ...(timeframe === undefined ? {} : { timeframe }),
        uri: report.uri,
        json: report.bytes,
      };
    });
    const market = marketAt(run.scope.asOf, ohlcv);
    const account = accountOf(await context.upstream('account'), market.asOf);
    const riskLimits = appliedRiskLimits(account?.snapshot);
    const assembled = this.runtime.assembleRecommendation(plan, {
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
      riskLimits,
    });
    const facts: RecommendationFacts = {
      lastClose: market.lastClose,
      reportIds: reports.map((r) => r.reportId),
      riskLimits,
      position: positionFacts(account?.snapshot, symbol),
    };
    const check: OutputCheck = (output) => recommendationOutputViolations(output, facts);
    signal.throwIfAborted();
    context.heartbeat({ stage: 'generate' });
    const generation = await this.runtime.generate(plan, assembled, {
      deadline: context.deadline,
      signal,
      now: () => context.now(),
      check,
    });
    // From here on the model was asked: nothing of this delivery may run again in-process.
    const execution = { llm: generation.llm };
    if (!generation.ok) {
      const { code, message, details, retryable } = generation.error;
      throw new StepError(code, message, { details, retryable, execution, final: true });
    }
    const recommendationId = recommendationIdFor(run.runId, stepId);
    const file = buildRecommendationFile({
      runId: run.runId,
      stepId,
      symbol,
      recommendationId,
      asOf: market.asOf,
      lastClose: market.lastClose,
      riskLimits,
      plan,
      result: generation.result,
      inputs: {
        ohlcvGcsUri: ohlcv.uri,
        reports: fileReports(reports),
        ...(account === undefined
          ? {}
          : { accountGcsUri: account.uri, accountId: account.snapshot.accountId }),
      },
    });
    checkFile(file, execution);
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serializeRecommendation(file), contentType: 'application/json' }],
      primaryUri: uri,
      outputs: { recommendationId },
      execution,
    };
  }

  /** Split-brain recovery: the harness vouched for the file; finalize without a model call. */
  recover(existing: ExistingArtifact<LlmRecommendationFile>): Promise<StepResult | null> {
    const { metadata } = existing.artifact;
    return Promise.resolve({
      artifacts: [],
      primaryUri: existing.uri,
      outputs: {
        recommendationId:
          metadata.recommendationId ?? recommendationIdFor(metadata.runId, metadata.stepId),
      },
      execution: { llm: executionMetadataOf(existing.artifact) },
    });
  }
}

type FileReport = LlmRecommendationFile['metadata']['inputs']['reports'][number];

/** metadata.inputs.reports: a non-empty list (the inputs schema requires a report). */
function fileReports(
  reports: readonly { reportId: string; stepId: string; timeframe?: Timeframe; uri: string }[],
): LlmRecommendationFile['metadata']['inputs']['reports'] {
  const entries = reports.map((r): FileReport => ({
    reportId: r.reportId,
    stepId: r.stepId,
    ...(r.timeframe === undefined ? {} : { timeframe: r.timeframe }),
    gcsUri: r.uri,
  }));
  const [first, ...rest] = entries;
  if (first === undefined) {
    throw new StepInputError('inputs.reportStepIds names no report', { field: 'reportStepIds' });
  }
  return [first, ...rest];
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

/**
 * The output passed the registry schema, the contract and the invariants; a file that still
 * breaks its contract means our own metadata is wrong: never echo values, only schema paths.
 */
function checkFile(file: LlmRecommendationFile, execution: Record<string, unknown>): void {
  const checked = validate.llmRecommendationFile(file);
  if (checked.ok) return;
  const paths = checked.issues.slice(0, 5).map((i) => i.path || '/');
  throw new StepError(
    'INVALID_STRUCTURED_OUTPUT',
    `llm_recommendation_file fails its contract: ${paths.join(', ')}`,
    { details: { issues: paths.map((path) => ({ path })) }, execution, final: true },
  );
}
