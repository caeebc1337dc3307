import type { LlmReportFile, ReportRef, Timeframe } from '@tda/contracts';
import { reportIdFor } from '@tda/flow-engine';
import {
  recommendationInputReport,
  reportStepIdFor,
  type ReportFixture,
} from './recommendation-fixtures';
import { validReportOutput } from './report-fixtures';

/**
 * Fixtures of aggregated reports (flow 3): input reports of an earlier run (llm_report_file with
 * metadata.asOf, the trend and the levels the offline analyst reads), the reportRefs the trigger
 * resolves them into, and an aggregate output citing given reportIds.
 */

/** The run whose per-timeframe reports are aggregated. */
export const AGGREGATE_SOURCE_RUN_ID = '20260919-000000_BTC-USDT_src01';
/** The aggregated run's asOf; the input reports describe this moment or an earlier one. */
export const AGGREGATE_AS_OF = '2026-09-20T00:00:00Z';

export interface AggregateInputFixture extends ReportFixture {
  /** metadata.asOf (default AGGREGATE_AS_OF). */
  asOf?: string;
  /** metadata.symbol (default BTC-USDT). */
  symbol?: string;
}

export function aggregateInputUri(runId: string, timeframe: Timeframe, stepId: string): string {
  return `gs://tda-artifacts/runs/${runId}/${timeframe}/${stepId}.json`;
}

/** A per-timeframe llm_report_file of the source run, as flow 3 reads it. */
export function aggregateInputReport(fixture: AggregateInputFixture): LlmReportFile {
  const file = recommendationInputReport({ runId: AGGREGATE_SOURCE_RUN_ID, ...fixture });
  return {
    ...file,
    metadata: {
      ...file.metadata,
      symbol: fixture.symbol ?? file.metadata.symbol,
      asOf: fixture.asOf ?? AGGREGATE_AS_OF,
    },
  };
}

/** The reportRef the trigger resolves for a report file (index id, URI, identity, asOf). */
export function aggregateReportRef(file: LlmReportFile): ReportRef {
  const { runId, stepId, timeframe } = file.metadata;
  if (timeframe === undefined) throw new Error('fixture reports have a timeframe');
  return {
    reportId: reportIdFor(runId, stepId),
    gcsUri: aggregateInputUri(runId, timeframe, stepId),
    runId,
    stepId,
    timeframe,
    asOf: file.metadata.asOf ?? AGGREGATE_AS_OF,
  };
}

/** The stepId of the source run's report of a timeframe. */
export function aggregateInputStepId(timeframe: Timeframe): string {
  return reportStepIdFor(timeframe);
}

/** An output that satisfies llm_aggregate_report_output_v1, citing `reportIds` in order. */
export function validAggregateOutput(
  reportIds: readonly string[],
  markdown = '## Aggregate\n\nThe timeframes agree.',
): Record<string, unknown> {
  const base = validReportOutput(markdown) as {
    summary: unknown;
    details: Record<string, unknown>;
  };
  return {
    summary: base.summary,
    details: {
      ...base.details,
      citations: reportIds.map((reportId) => ({ reportId, claim: 'The trend is bullish.' })),
    },
  };
}
