import { validate, type LlmRecommendationFile, type Timeframe } from '@tda/contracts';
import { recommendationIdFor } from '@tda/flow-engine';
import type { LlmCallPlan, LlmExecution, LlmStepRuntime, StructuredOutputSuccess } from '@tda/llm';
import { LLM_RECOMMENDATION_STEP } from '@tda/step-types';
import {
  StepError,
  StepInputError,
  type ExistingArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';
import {
  buildRecommendationFile,
  executionMetadataOf,
  serializeRecommendation,
} from './llm-recommendation-file';
import { prepareRecommendation, type PreparedRecommendation } from './recommendation-context';

// Part of this service's public API since before the context reading moved out of this file.
export { marketAt } from './recommendation-context';

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
    const { inputs, signal } = context;
    context.heartbeat({ stage: 'resolve_profile' });
    const plan = await this.runtime.plan(inputs.llm);
    context.heartbeat({ stage: 'read_context' });
    const prepared = await prepareRecommendation(this.runtime, plan, context);
    signal.throwIfAborted();
    context.heartbeat({ stage: 'generate' });
    const generation = await this.runtime.generate(plan, prepared.assembled, {
      deadline: context.deadline,
      signal,
      now: () => context.now(),
      check: prepared.check,
    });
    // From here on the model was asked: nothing of this delivery may run again in-process.
    const execution = { llm: generation.llm };
    if (!generation.ok) {
      const { code, message, details, retryable } = generation.error;
      throw new StepError(code, message, { details, retryable, execution, final: true });
    }
    return recommendationResult(context, plan, prepared, generation.result, execution);
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

/**
 * The recommendation file and the step's result. Runs after the model was asked, so a contract
 * failure of the file is final and carries the execution (checkFile): never a second model call.
 */
function recommendationResult(
  context: Context,
  plan: LlmCallPlan,
  prepared: PreparedRecommendation,
  result: StructuredOutputSuccess,
  execution: { llm: LlmExecution },
): StepResult {
  const { run, stepId } = context;
  const { market, account } = prepared;
  const recommendationId = recommendationIdFor(run.runId, stepId);
  const file = buildRecommendationFile({
    runId: run.runId,
    stepId,
    symbol: run.scope.symbol,
    recommendationId,
    asOf: market.asOf,
    lastClose: market.lastClose,
    riskLimits: prepared.riskLimits,
    plan,
    result,
    inputs: {
      ohlcvGcsUri: prepared.ohlcvUri,
      reports: fileReports(prepared.reports),
      ...(account === undefined
        ? {}
        : { accountGcsUri: account.uri, accountId: account.snapshot.accountId }),
      ...(prepared.newsUri === undefined ? {} : { newsGcsUri: prepared.newsUri }),
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
