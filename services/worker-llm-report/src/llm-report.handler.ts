import { reportIdFor } from '@tda/flow-engine';
import { validate, type LlmReportFile } from '@tda/contracts';
import type { LlmStepRuntime } from '@tda/llm';
import { LLM_REPORT_STEP } from '@tda/step-types';
import {
  StepError,
  type ExistingArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';
import { prepareAggregateReport } from './aggregate-context';
import { buildReportFile, executionMetadataOf, serializeReport } from './llm-report-file';
import { normalizedRequests, runTimeframes } from './indicator-requests';
import { checkOutputFormat, reportModeOf } from './report-mode';
import { prepareTimeframeReport } from './timeframe-context';

type Context = StepContext<typeof LLM_REPORT_STEP>;

/**
 * LLM_REPORT (seed 002): the report of one timeframe from its OHLCV export, its charts and the
 * earlier reports it builds on — or, with inputs.reportRefs (flow 3), an aggregated report that
 * synthesises existing reports of the symbol across timeframes and cites them by reportId. The
 * harness validated the inputs and reads the upstream artifacts; the LLM step runtime resolves the
 * profile and the prompt (an unusable profile never reaches a model), and runs the
 * structured-output pipeline within the step's time budget (for an aggregated report with the
 * citation check: an unknown reportId is invalid output, repaired once). Nothing of the prompt,
 * the context or the model output reaches logs, errors or the run document.
 */
export class LlmReportHandler implements StepHandler<typeof LLM_REPORT_STEP> {
  readonly descriptor = LLM_REPORT_STEP;

  constructor(readonly runtime: LlmStepRuntime) {}

  async execute(context: Context): Promise<StepResult> {
    const { run, stepId, inputs, signal } = context;
    const mode = reportModeOf(context);
    context.heartbeat({ stage: 'resolve_profile' });
    const plan = await this.runtime.plan(inputs.llm);
    checkOutputFormat(plan, mode);
    context.heartbeat({ stage: 'read_context' });
    const prepared =
      mode.kind === 'aggregate'
        ? await prepareAggregateReport(plan, context, mode)
        : await prepareTimeframeReport(this.runtime, plan, context, mode.timeframe);
    signal.throwIfAborted();
    context.heartbeat({ stage: 'generate' });
    const generation = await this.runtime.generate(plan, prepared.assembled, {
      deadline: context.deadline,
      signal,
      now: () => context.now(),
      ...(prepared.check === undefined ? {} : { check: prepared.check }),
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
      ...(prepared.timeframe === undefined ? {} : { timeframe: prepared.timeframe }),
      asOf: prepared.asOf,
      plan,
      result: generation.result,
      sources: prepared.sources,
    });
    checkReport(report, execution);
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serializeReport(report), contentType: 'application/json' }],
      primaryUri: uri,
      outputs: reportOutputs(report, context),
      execution,
    };
  }

  /** Split-brain recovery: the harness vouched for the report file; finalize without a model call. */
  recover(existing: ExistingArtifact<LlmReportFile>, context: Context): Promise<StepResult | null> {
    return Promise.resolve({
      artifacts: [],
      primaryUri: existing.uri,
      outputs: reportOutputs(existing.artifact, context),
      execution: { llm: executionMetadataOf(existing.artifact) },
    });
  }
}

/**
 * The reports/{reportId} entry the orchestrator indexes this report under (seed 001), and in
 * flow 5 the indicators the report asked for (the orchestrator expands the run from them).
 */
function reportOutputs(report: LlmReportFile, context: Context): Record<string, unknown> {
  const reportId = reportIdFor(context.run.runId, context.stepId);
  const requests = normalizedRequests(report.output, runTimeframes(context.run));
  return requests === undefined ? { reportId } : { reportId, indicatorRequests: requests };
}

/**
 * The output passed the registry schema; a file that still breaks its contract means our own
 * metadata (or a registry schema looser than the contract's invariants) is wrong: never echo
 * values, only schema paths.
 */
function checkReport(report: LlmReportFile, execution: Record<string, unknown>): void {
  const checked = validate.llmReportFile(report);
  if (checked.ok) {
    // The artifact check's problems are our own words (fields, indices), never output text.
    const problem = LLM_REPORT_STEP.artifact.check?.(checked.value);
    if (problem === undefined) return;
    throw new StepError('INVALID_STRUCTURED_OUTPUT', `llm_report_file: ${problem}`, {
      details: { contract: 'llm_report_file' },
      execution,
      final: true,
    });
  }
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
