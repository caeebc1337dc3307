import { readFileSync } from 'node:fs';
import { EXAMPLES_DIR } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { computeSchemaSha256 } from './output-schema';
import aggregateSchema from './defaults/llm_aggregate_report_output_v1.json';
import recommendationSchema from './defaults/llm_recommendation_output_v1.json';
import defaultSchema from './defaults/llm_report_output_v1.json';

describe('schemaSha256 in the contract examples', () => {
  it('is the sorted-key hash of the default llm_report_output_v1 schema', () => {
    const expected = computeSchemaSha256(defaultSchema.jsonSchema);
    const profile = JSON.parse(readFileSync(`${EXAMPLES_DIR}llm_profile.example.json`, 'utf8')) as {
      structuredOutput: { schemaSha256: string };
    };
    expect(profile.structuredOutput.schemaSha256).toBe(expected);
  });

  it('is the sorted-key hash of the default llm_recommendation_output_v1 schema', () => {
    const expected = computeSchemaSha256(recommendationSchema.jsonSchema);
    const file = JSON.parse(
      readFileSync(`${EXAMPLES_DIR}llm_recommendation_file.example.json`, 'utf8'),
    ) as { metadata: { llm: { schemaSha256: string } } };
    expect(file.metadata.llm.schemaSha256).toBe(expected);
  });

  it('is the sorted-key hash of the default llm_aggregate_report_output_v1 schema', () => {
    const expected = computeSchemaSha256(aggregateSchema.jsonSchema);
    const file = JSON.parse(
      readFileSync(`${EXAMPLES_DIR}llm_report_file.aggregate.example.json`, 'utf8'),
    ) as { metadata: { llm: { schemaSha256: string } } };
    const inputs = JSON.parse(
      readFileSync(`${EXAMPLES_DIR}llm_report_inputs.aggregate.example.json`, 'utf8'),
    ) as { llm: { llmProfile: { structuredOutput: { schemaSha256: string } } } };
    expect(file.metadata.llm.schemaSha256).toBe(expected);
    expect(inputs.llm.llmProfile.structuredOutput.schemaSha256).toBe(expected);
  });
});
