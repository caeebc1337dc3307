import type {
  AppliedRiskLimits,
  LlmRecommendation,
  LlmRecommendationFile,
  LlmUsageMetadata as FileUsage,
} from '@tda/contracts';
import {
  canonicalJson,
  type LlmCallPlan,
  type LlmUsageMetadata,
  type StructuredOutputSuccess,
} from '@tda/llm';

/** Only the counts the contract knows, and only when the provider gave the required two. */
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

export interface RecommendationFacts {
  runId: string;
  stepId: string;
  symbol: string;
  recommendationId: string;
  asOf: string;
  lastClose: number;
  riskLimits: AppliedRiskLimits;
  plan: LlmCallPlan;
  result: StructuredOutputSuccess;
  inputs: LlmRecommendationFile['metadata']['inputs'];
}

/**
 * The llm_recommendation_file: worker-owned metadata + the model-owned output (valid against the
 * registry schema, the contract and the domain invariants). No generatedAt: executing the step
 * again writes the same bytes.
 */
export function buildRecommendationFile(facts: RecommendationFacts): LlmRecommendationFile {
  const { plan, result } = facts;
  const usage = fileUsage(result.usageMetadata);
  const llm: LlmRecommendationFile['metadata']['llm'] = {
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
      asOf: facts.asOf,
      lastClose: facts.lastClose,
      riskLimits: facts.riskLimits,
      recommendationId: facts.recommendationId,
      promptId: plan.identity.promptId,
      schemaId: plan.config.schemaId,
      modelName: plan.config.model,
      provider: plan.identity.provider,
      inputs: facts.inputs,
      llm,
    },
    // The pipeline's check validated it against llm_recommendation.schema.json.
    output: result.output as unknown as LlmRecommendation,
  };
}

/** The file's bytes: keys sorted at every depth, so the same recommendation is the same bytes. */
export function serializeRecommendation(file: LlmRecommendationFile): Buffer {
  return Buffer.from(`${canonicalJson(file)}\n`, 'utf8');
}

/** `outputs.execution.llm` of a step recovered from its file (no model call made). */
export function executionMetadataOf(file: LlmRecommendationFile): Record<string, unknown> {
  const { metadata } = file;
  return {
    provider: metadata.provider,
    modelName: metadata.modelName,
    promptId: metadata.promptId,
    schemaId: metadata.schemaId,
    ...metadata.llm,
  };
}
