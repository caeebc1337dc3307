import type { LlmReportFile, LlmUsageMetadata as ReportUsage, Timeframe } from '@tda/contracts';
import {
  canonicalJson,
  type LlmCallPlan,
  type LlmUsageMetadata,
  type StructuredOutputSuccess,
} from '@tda/llm';

/** Only the counts the report contract knows, and only when the provider gave the required two. */
function reportUsage(usage: LlmUsageMetadata | undefined): ReportUsage | undefined {
  if (usage?.promptTokenCount === undefined || usage.totalTokenCount === undefined)
    return undefined;
  return {
    promptTokenCount: usage.promptTokenCount,
    totalTokenCount: usage.totalTokenCount,
    ...(usage.candidatesTokenCount === undefined
      ? {}
      : { candidatesTokenCount: usage.candidatesTokenCount }),
    ...(usage.thoughtsTokenCount === undefined
      ? {}
      : { thoughtsTokenCount: usage.thoughtsTokenCount }),
  };
}

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
  const usage = reportUsage(result.usageMetadata);
  const llm: LlmReportFile['metadata']['llm'] = {
    finishReason: result.finishReason,
    attempts: { total: result.attempts },
    schemaSha256: plan.config.schemaSha256,
    ...(result.modelVersion === undefined ? {} : { modelVersion: result.modelVersion }),
    ...(result.requestId === undefined ? {} : { requestId: result.requestId }),
    ...(usage === undefined ? {} : { usageMetadata: usage }),
  };
  return {
    metadata: {
      schemaVersion: plan.config.schemaVersion,
      runId: facts.runId,
      stepId: facts.stepId,
      symbol: facts.symbol,
      ...(facts.timeframe === undefined ? {} : { timeframe: facts.timeframe }),
      asOf: facts.asOf,
      promptId: plan.identity.promptId,
      schemaId: plan.config.schemaId,
      modelName: plan.config.model,
      provider: plan.identity.provider,
      inputs: facts.sources,
      llm,
    },
    output: result.output as LlmReportFile['output'],
  };
}

/** The report file's bytes: keys sorted at every depth, so the same report is the same bytes. */
export function serializeReport(report: LlmReportFile): Buffer {
  return Buffer.from(`${canonicalJson(report)}\n`, 'utf8');
}

/** `outputs.execution.llm` of a step recovered from its report file (no model call made). */
export function executionMetadataOf(report: LlmReportFile): Record<string, unknown> {
  const { metadata } = report;
  return {
    provider: metadata.provider,
    modelName: metadata.modelName,
    promptId: metadata.promptId,
    schemaId: metadata.schemaId,
    ...metadata.llm,
  };
}
