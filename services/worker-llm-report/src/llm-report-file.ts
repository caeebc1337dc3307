import type { LlmReportFile, Timeframe } from '@tda/contracts';
import {
  canonicalJson,
  fileCallMetadata,
  type LlmCallPlan,
  type StructuredOutputSuccess,
} from '@tda/llm';

export interface ReportFacts {
  runId: string;
  stepId: string;
  symbol: string;
  /** Absent for an aggregated report (flow 3). */
  timeframe?: Timeframe;
  /** The moment the report describes (metadata.asOf). */
  asOf: string;
  plan: LlmCallPlan;
  result: StructuredOutputSuccess;
  sources: LlmReportFile['metadata']['inputs'];
}

/**
 * The llm_report_file (seed 002): worker-owned metadata + the validated model output. No
 * generatedAt: the file must be byte-identical when the step is executed again.
 */
export function buildReportFile(facts: ReportFacts): LlmReportFile {
  const { plan, result } = facts;
  return {
    metadata: {
      ...fileCallMetadata(plan, result),
      runId: facts.runId,
      stepId: facts.stepId,
      symbol: facts.symbol,
      ...(facts.timeframe === undefined ? {} : { timeframe: facts.timeframe }),
      asOf: facts.asOf,
      inputs: facts.sources,
    },
    output: result.output as LlmReportFile['output'],
  };
}

/** The report file's bytes: keys sorted at every depth, so the same report is the same bytes. */
export function serializeReport(report: LlmReportFile): Buffer {
  return Buffer.from(`${canonicalJson(report)}\n`, 'utf8');
}

export { executionMetadataOf } from '@tda/llm';
