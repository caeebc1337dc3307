import type { AppliedRiskLimits, LlmRecommendation, LlmRecommendationFile } from '@tda/contracts';
import {
  canonicalJson,
  fileCallMetadata,
  type LlmCallPlan,
  type StructuredOutputSuccess,
} from '@tda/llm';

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
  return {
    metadata: {
      ...fileCallMetadata(plan, result),
      runId: facts.runId,
      stepId: facts.stepId,
      symbol: facts.symbol,
      asOf: facts.asOf,
      lastClose: facts.lastClose,
      riskLimits: facts.riskLimits,
      recommendationId: facts.recommendationId,
      inputs: facts.inputs,
    },
    // The pipeline's check validated it against llm_recommendation.schema.json.
    output: result.output as unknown as LlmRecommendation,
  };
}

/** The file's bytes: keys sorted at every depth, so the same recommendation is the same bytes. */
export function serializeRecommendation(file: LlmRecommendationFile): Buffer {
  return Buffer.from(`${canonicalJson(file)}\n`, 'utf8');
}

export { executionMetadataOf } from '@tda/llm';
