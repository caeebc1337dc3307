import type { LlmReportFile, Timeframe } from '@tda/contracts';
import type { AssembledPrompt, LlmCallPlan, LlmStepRuntime, OutputCheck } from '@tda/llm';
import type { LLM_REPORT_STEP } from '@tda/step-types';
import { StepInputError, type StepContext } from '@tda/worker-kit';
import { indicatorRequestCheck, requestableIndicators, runTimeframes } from './indicator-requests';

type Context = StepContext<typeof LLM_REPORT_STEP>;

/** What the model is asked and what the report file records of it, for either kind of report. */
export interface PreparedReport {
  assembled: AssembledPrompt;
  /** The output's domain check: an aggregated report's citations, flow 5's indicator requests. */
  check?: OutputCheck;
  /** Absent for an aggregated report. */
  timeframe?: Timeframe;
  /** metadata.asOf: the moment the report describes. */
  asOf: string;
  sources: LlmReportFile['metadata']['inputs'];
}

/**
 * A report of one timeframe (seed 002): its OHLCV export, its charts and the earlier reports it
 * builds on, read through the harness's upstream reader. Its asOf is the run's, or for a run
 * without one (created before asOf existed) the asOf its OHLCV export was cut at.
 */
export async function prepareTimeframeReport(
  runtime: LlmStepRuntime,
  plan: LlmCallPlan,
  context: Context,
  timeframe: Timeframe,
): Promise<PreparedReport> {
  const { run, stepId } = context;
  const ohlcv = await context.upstream('ohlcv');
  const charts = await context.upstream('charts');
  if (ohlcv === undefined || charts === undefined) {
    // reportModeOf checked both are named; the harness resolved them.
    throw new StepInputError('a report of one timeframe needs its OHLCV and charts steps', {
      field: ohlcv === undefined ? 'ohlcvStepId' : 'chartsManifestStepId',
    });
  }
  const previous = await context.upstream('previousReports');
  const indicators = await context.upstream('indicators');
  const images = await runtime.readCharts(charts.artifact, (uri) => context.artifacts.read(uri));
  const requestable = requestableIndicators(plan, run, context.step);
  const assembled = runtime.assemble(plan, {
    identity: { runId: run.runId, stepId, symbol: run.scope.symbol, timeframe },
    context: {
      ohlcv: { uri: ohlcv.uri, json: ohlcv.bytes },
      chartsManifest: { uri: charts.uri, json: charts.bytes },
      charts: images,
      previousReports: previous.map((p) => ({ stepId: p.stepId, uri: p.uri, json: p.bytes })),
      indicators: indicators.map((i) => ({ stepId: i.stepId, uri: i.uri, json: i.bytes })),
    },
    ...(requestable === undefined ? {} : { requestableIndicators: requestable }),
  });
  return {
    assembled,
    ...(requestable === undefined
      ? {}
      : { check: indicatorRequestCheck(runTimeframes(run), requestable.length > 0) }),
    timeframe,
    asOf: run.scope.asOf ?? ohlcv.artifact.asOf,
    sources: {
      ohlcvGcsUri: ohlcv.uri,
      chartsManifestGcsUri: charts.uri,
      chartGcsUris: images.map((c) => c.uri),
      previousReportGcsUris: previous.map((p) => p.uri),
    },
  };
}
