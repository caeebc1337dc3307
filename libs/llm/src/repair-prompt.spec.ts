import { describe, expect, it } from 'vitest';
import { buildRepairPrompt } from './repair-prompt';

const base = {
  schemaId: 'llm_report_output_v1',
  jsonSchema: { type: 'object', required: ['summary', 'details'] },
  reason: {
    kind: 'schema_validation' as const,
    message: 'the output does not match schema llm_report_output_v1: 1 error(s)',
  },
  validationErrors: [
    { path: '/details', keyword: 'required', message: "missing required property 'risks'" },
  ],
};

describe('buildRepairPrompt', () => {
  it('states the reason, the errors, the JSON-only rule and the schema', () => {
    const text = buildRepairPrompt(base);
    expect(text).toContain('kind=schema_validation');
    expect(text).toContain("- /details: missing required property 'risks' (required)");
    expect(text).toContain(
      'Return ONLY one JSON object that matches the JSON Schema "llm_report_output_v1" below.',
    );
    expect(text).toContain('No Markdown, no code fences, no text before or after the JSON.');
    expect(text).toContain('{"required":["summary","details"],"type":"object"}');
  });

  it('includes the previous text only below the size cap', () => {
    expect(buildRepairPrompt({ ...base, previousText: '{"x":1}' })).toContain('{"x":1}');
    const big = 'y'.repeat(40);
    expect(
      buildRepairPrompt({ ...base, previousText: big, maxPreviousTextBytes: 39 }),
    ).not.toContain(big);
    expect(buildRepairPrompt(base)).not.toContain('previous (rejected) response');
  });
});
