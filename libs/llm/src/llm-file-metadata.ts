import type {
  LlmExecutionMetadata,
  LlmUsageMetadata as FileUsage,
  LlmReportFile,
  LlmRecommendationFile,
} from '@tda/contracts';
import type { LlmUsageMetadata } from './llm-client.port';
import type { LlmCallPlan } from './llm-step.runtime';
import type { StructuredOutputSuccess } from './structured-output.pipeline';

/** Only the counts the file contracts know, and only when the provider gave the required two. */
function fileUsage(usage: LlmUsageMetadata | undefined): FileUsage | undefined {
  if (usage?.promptTokenCount === undefined || usage.totalTokenCount === undefined) {
    return undefined;
  }
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

/**
 * metadata.llm of an LLM step's file (report or recommendation): the provider's answer metadata
 * of the accepted call, in the contract's key order. No wall-clock time: executing the step again
 * writes the same bytes.
 */
export function fileExecutionMetadata(
  plan: LlmCallPlan,
  result: StructuredOutputSuccess,
): LlmExecutionMetadata {
  const usage = fileUsage(result.usageMetadata);
  return {
    finishReason: result.finishReason,
    attempts: { total: result.attempts },
    schemaSha256: plan.config.schemaSha256,
    ...(result.modelVersion === undefined ? {} : { modelVersion: result.modelVersion }),
    ...(result.requestId === undefined ? {} : { requestId: result.requestId }),
    ...(usage === undefined ? {} : { usageMetadata: usage }),
  };
}

/**
 * What every LLM file (report, recommendation) states about its call, owned by the worker:
 * format version, prompt, schema, model, provider and the execution metadata.
 */
export function fileCallMetadata(plan: LlmCallPlan, result: StructuredOutputSuccess) {
  return {
    schemaVersion: plan.config.schemaVersion,
    promptId: plan.identity.promptId,
    schemaId: plan.config.schemaId,
    modelName: plan.config.model,
    provider: plan.identity.provider,
    llm: fileExecutionMetadata(plan, result),
  };
}

/** outputs.execution.llm of a step recovered from its file (split-brain recovery, seed 002). */
export function executionMetadataOf(
  file: LlmReportFile | LlmRecommendationFile,
): Record<string, unknown> {
  const { metadata } = file;
  return {
    provider: metadata.provider,
    modelName: metadata.modelName,
    promptId: metadata.promptId,
    schemaId: metadata.schemaId,
    ...metadata.llm,
  };
}
