import { readFileSync } from 'node:fs';
import { EXAMPLES_DIR } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { computeSchemaSha256 } from './output-schema';
import defaultSchema from './defaults/llm_report_output_v1.json';

describe('schemaSha256 in the contract examples', () => {
  it('is the sorted-key hash of the default llm_report_output_v1 schema', () => {
    const expected = computeSchemaSha256(defaultSchema.jsonSchema);
    const profile = JSON.parse(readFileSync(`${EXAMPLES_DIR}llm_profile.example.json`, 'utf8')) as {
      structuredOutput: { schemaSha256: string };
    };
    expect(profile.structuredOutput.schemaSha256).toBe(expected);
  });
});
