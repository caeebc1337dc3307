import { stepIdTimeframe } from '@tda/flow-engine';
import { validate, type LlmReportFile, type Timeframe } from '@tda/contracts';
import type { LlmStepRuntime } from '@tda/llm';
import { LLM_REPORT_STEP } from '@tda/step-types';
import {
  StepError,
  StepInputError,
  type ExistingArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';
import { buildReportFile, executionMetadataOf, serializeReport } from './llm-report-file';

type Context = StepContext<typeof LLM_REPORT_STEP>;

/**
 * LLM_REPORT (seed 002): the report of one timeframe from its OHLCV export, its charts and the
 * earlier reports it builds on. The harness validated the inputs and reads the upstream
 * artifacts; the LLM step runtime resolves the profile and the prompt (an unusable profile never
 * reaches a model), assembles the prompt within the context limits and runs the structured-output
 * pipeline within the step's time budget. Nothing of the prompt, the context or the model output
 * reaches logs, errors or the run document.
 */
export class LlmReportHandler implements StepHandler<typeof LLM_REPORT_STEP> {
  readonly descriptor = LLM_REPORT_STEP;

  constructor(readonly runtime: LlmStepRuntime) {}

  async execute(context: Context): Promise<StepResult> {
    const { run, stepId, inputs, signal } = context;
    const timeframe = timeframeOf(context);
    context.heartbeat({ stage: 'resolve_profile' });
    const plan = await this.runtime.plan(inputs.llm);
    context.heartbeat({ stage: 'read_context' });
    const ohlcv = await context.upstream('ohlcv');
    const charts = await context.upstream('charts');
    const previous = await context.upstream('previousReports');
    const images = await this.runtime.readCharts(charts.artifact, (uri) =>
      context.artifacts.read(uri),
    );
    const assembled = this.runtime.assemble(plan, {
      identity: { runId: run.runId, stepId, symbol: run.scope.symbol, timeframe },
      context: {
        ohlcv: { uri: ohlcv.uri, json: ohlcv.bytes },
        chartsManifest: { uri: charts.uri, json: charts.bytes },
        charts: images,
        previousReports: previous.map((p) => ({ stepId: p.stepId, uri: p.uri, json: p.bytes })),
      },
    });
    signal.throwIfAborted();
    context.heartbeat({ stage: 'generate' });
    const generation = await this.runtime.generate(plan, assembled, {
      deadline: context.deadline,
      signal,
      now: () => context.now(),
    });
    // From here on the model was asked: nothing of this delivery may run again in-process.
    const execution = { llm: generation.llm };
    if (!generation.ok) {
      const { code, message, details, retryable } = generation.error;
      throw new StepError(code, message, { details, retryable, execution, final: true });
    }
    const report = buildReportFile({
      runId: run.runId,
      stepId,
      symbol: run.scope.symbol,
      timeframe,
      plan,
      result: generation.result,
      sources: {
        ohlcvGcsUri: ohlcv.uri,
        chartsManifestGcsUri: charts.uri,
        chartGcsUris: images.map((c) => c.uri),
        previousReportGcsUris: previous.map((p) => p.uri),
      },
    });
    checkReport(report, execution);
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serializeReport(report), contentType: 'application/json' }],
      primaryUri: uri,
      execution,
    };
  }

  /** Split-brain recovery: the harness vouched for the report file; finalize without a model call. */
  recover(existing: ExistingArtifact<LlmReportFile>): Promise<StepResult | null> {
    return Promise.resolve({
      artifacts: [],
      primaryUri: existing.uri,
      execution: { llm: executionMetadataOf(existing.artifact) },
    });
  }
}

/** An LLM_REPORT step needs a timeframe, and the stepId's timeframe segment must be it (seed 002). */
function timeframeOf(context: Context): Timeframe {
  const { timeframe } = context.step;
  if (timeframe === undefined) {
    throw new StepInputError('an LLM_REPORT step needs a timeframe', { field: 'timeframe' });
  }
  const segment = stepIdTimeframe(context.stepId);
  if (segment !== undefined && segment !== timeframe) {
    throw new StepInputError(`stepId names timeframe ${segment}, the step has ${timeframe}`, {
      field: 'timeframe',
    });
  }
  return timeframe;
}

/**
 * The output passed the registry schema; a file that still breaks its contract means our own
 * metadata (or a registry schema looser than the contract's invariants) is wrong: never echo
 * values, only schema paths.
 */
function checkReport(report: LlmReportFile, execution: Record<string, unknown>): void {
  const checked = validate.llmReportFile(report);
  if (checked.ok) return;
  const paths = checked.issues.slice(0, 5).map((i) => i.path || '/');
  throw new StepError(
    'INVALID_STRUCTURED_OUTPUT',
    `llm_report_file fails its contract: ${paths.join(', ')}`,
    {
      details: { issues: paths.map((path) => ({ path })) },
      execution,
      final: true,
    },
  );
}
