import type { LlmSchema } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { defaultRecommendationSchema, defaultReportSchema } from './default-registry';
import { InMemoryPromptRegistry } from './in-memory-prompt.registry';
import { LlmProfileError } from './llm.errors';
import {
  type LlmProfileValidation,
  llmProfileSchemaId,
  resolveLlmProfile,
  type SchemaLookupResult,
  validateLlmProfile,
} from './llm-profile';
import { computeSchemaSha256, OutputSchemaValidatorCache } from './output-schema';
import type { PromptRegistry } from './prompt-registry.port';
import { outputSchemaOf } from './structured-output.pipeline';

const found: SchemaLookupResult = { status: 'found', schema: defaultReportSchema() };

function profile(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    modelName: 'gemini-2.5-flash',
    temperature: 0.2,
    maxOutputTokens: 8192,
    candidateCount: 1,
    responseMimeType: 'application/json',
    structuredOutput: { schemaId: 'llm_report_output_v1' },
    ...overrides,
  };
}

function check(
  p: unknown,
  schema: SchemaLookupResult = found,
  provider: 'gemini' | 'offline' = 'gemini',
): LlmProfileValidation {
  return validateLlmProfile(p, { schema, provider });
}

function expectInvalid(result: LlmProfileValidation, field: string): LlmProfileError {
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('expected an invalid profile');
  expect(result.error).toBeInstanceOf(LlmProfileError);
  expect(result.error.code).toBe('LLM_PROFILE_INVALID');
  expect(result.error.field).toBe(field);
  expect(result.error.message).toContain(`llmProfile.${field}`);
  return result.error;
}

describe('validateLlmProfile', () => {
  it('gives the effective config exactly from the profile, with the registry schema', () => {
    const result = check(
      profile({
        topP: 0.9,
        topK: 40,
        stopSequences: ['END'],
        thinkingConfig: { thinkingBudget: 512 },
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const schema = defaultReportSchema();
    expect(result.config).toMatchObject({
      provider: 'gemini',
      model: 'gemini-2.5-flash',
      schemaId: 'llm_report_output_v1',
      schemaVersion: 1,
      schemaSha256: computeSchemaSha256(schema.jsonSchema),
    });
    expect(result.config.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema.jsonSchema,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 8192,
      stopSequences: ['END'],
      candidateCount: 1,
      thinkingConfig: { thinkingBudget: 512 },
    });
    expect(result.config.schemaSha256Mismatch).toBeUndefined();
    expect(result.config.validator.schemaSha256).toBe(result.config.schemaSha256);
    expect(outputSchemaOf(result.config)).toEqual({
      schemaId: 'llm_report_output_v1',
      jsonSchema: schema.jsonSchema,
      validator: result.config.validator,
    });
  });

  it('adds nothing the profile does not set (no defaults merged)', () => {
    const result = check({
      modelName: 'gemini-2.5-pro',
      responseMimeType: 'application/json',
      structuredOutput: { schemaId: 'llm_report_output_v1' },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.keys(result.config.generationConfig).sort()).toEqual([
      'responseJsonSchema',
      'responseMimeType',
    ]);
  });

  it('accepts the contracts example profiles', () => {
    for (const file of ['llm_profile.example.json', 'llm_profile.gemini-3.example.json']) {
      expect(check(loadExample(file)).ok).toBe(true);
    }
  });

  it('rejects fields outside the allowlist, naming the field', () => {
    const error = expectInvalid(check(profile({ seed: 42 })), 'seed');
    expect(error.message).toContain("unknown field 'seed'");
    expectInvalid(check(profile({ temperature: 3 })), 'temperature');
    expectInvalid(check(profile({ thinkingConfig: { budget: 1 } })), 'thinkingConfig.budget');
    expectInvalid(check('not an object'), '(root)');
  });

  it('requires candidateCount 1 when present', () => {
    expectInvalid(check(profile({ candidateCount: 2 })), 'candidateCount');
    const { candidateCount: _c, ...rest } = profile();
    expect(check(rest).ok).toBe(true);
  });

  it('requires responseMimeType application/json (no markdown fallback, also when absent)', () => {
    expectInvalid(check(profile({ responseMimeType: 'text/markdown' })), 'responseMimeType');
    const { responseMimeType: _m, ...rest } = profile();
    expectInvalid(check(rest), 'responseMimeType');
  });

  it('rejects inline schemas (decision: registry schemas only)', () => {
    const { structuredOutput: _s, ...rest } = profile();
    expectInvalid(check({ ...rest, jsonSchema: { type: 'object' } }), 'jsonSchema');
    expectInvalid(check({ ...rest, responseSchema: { type: 'OBJECT' } }), 'responseSchema');
  });

  it('requires structuredOutput.schemaId following llm_report_output_v{N}', () => {
    const { structuredOutput: _s, ...rest } = profile();
    expectInvalid(check(rest), 'structuredOutput.schemaId');
    expectInvalid(
      check(profile({ structuredOutput: { schemaId: 'llm_recommendation_output_v1' } })),
      'structuredOutput.schemaId',
    );
    expectInvalid(
      check(profile({ structuredOutput: { schemaId: 'report_v1' } })),
      'structuredOutput.schemaId',
    );
  });

  it('reads schemaVersion from the schema id', () => {
    const v3: LlmSchema = { ...defaultReportSchema(), schemaId: 'llm_report_output_v3' };
    const result = check(profile({ structuredOutput: { schemaId: 'llm_report_output_v3' } }), {
      status: 'found',
      schema: v3,
    });
    expect(result.ok && result.config.schemaVersion).toBe(3);
  });

  it('fails when the registry schema is missing, invalid, of another kind or breaking the invariants', () => {
    expectInvalid(check(profile(), { status: 'missing' }), 'structuredOutput.schemaId');
    const schema = defaultReportSchema();
    const props = schema.jsonSchema['properties'] as Record<string, unknown>;
    const broken: LlmSchema = {
      ...schema,
      jsonSchema: { ...schema.jsonSchema, properties: { ...props, details: { type: 'string' } } },
    };
    const error = expectInvalid(
      check(profile(), { status: 'found', schema: broken }),
      'structuredOutput.schemaId',
    );
    expect(error.message).toContain('minimal invariants');
    const otherKind: LlmSchema = { ...schema, kind: 'LLM_RECOMMENDATION_OUTPUT' };
    expectInvalid(
      check(profile(), { status: 'found', schema: otherKind }),
      'structuredOutput.schemaId',
    );
    const otherId: LlmSchema = { ...schema, schemaId: 'llm_report_output_v2' };
    expectInvalid(
      check(profile(), { status: 'found', schema: otherId }),
      'structuredOutput.schemaId',
    );
  });

  it('fails when the registry schema does not compile', () => {
    const schema = defaultReportSchema();
    const bad: LlmSchema = {
      ...schema,
      jsonSchema: { ...schema.jsonSchema, $ref: '#/$defs/nothing' },
    };
    const error = expectInvalid(
      check(profile(), { status: 'found', schema: bad }),
      'structuredOutput.schemaId',
    );
    expect(error.message).toContain('unsupported');
  });

  it('allows only gemini-* models for Gemini/Vertex; the offline provider accepts any', () => {
    expectInvalid(check(profile({ modelName: 'gpt-4o' })), 'modelName');
    expectInvalid(
      validateLlmProfile(profile({ modelName: 'claude-x' }), { schema: found, provider: 'vertex' }),
      'modelName',
    );
    expect(check(profile({ modelName: 'offline-analyst-v1' }), found, 'offline').ok).toBe(true);
  });

  it('treats structuredOutput.schemaSha256 as informational: a mismatch is reported, not a failure', () => {
    const other = 'a'.repeat(64);
    const result = check(
      profile({ structuredOutput: { schemaId: 'llm_report_output_v1', schemaSha256: other } }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.schemaSha256Mismatch).toEqual({
      profile: other,
      registry: result.config.schemaSha256,
    });
    const same = check(
      profile({
        structuredOutput: {
          schemaId: 'llm_report_output_v1',
          schemaSha256: result.config.schemaSha256,
        },
      }),
    );
    expect(same.ok && same.config.schemaSha256Mismatch).toBeUndefined();
  });

  it('reuses a shared validator cache', () => {
    const validators = new OutputSchemaValidatorCache();
    const a = validateLlmProfile(profile(), { schema: found, provider: 'gemini', validators });
    const b = validateLlmProfile(profile(), { schema: found, provider: 'gemini', validators });
    expect(a.ok && b.ok && a.config.validator === b.config.validator).toBe(true);
  });
});

describe('resolveLlmProfile', () => {
  it('looks the schema up in the registry', async () => {
    const registry = new InMemoryPromptRegistry({ schemas: [defaultReportSchema()] });
    const result = await resolveLlmProfile(profile(), { registry, provider: 'gemini' });
    expect(result.ok).toBe(true);
    const missing = await resolveLlmProfile(
      profile({ structuredOutput: { schemaId: 'llm_report_output_v7' } }),
      { registry, provider: 'gemini' },
    );
    expectInvalid(missing, 'structuredOutput.schemaId');
  });

  it('maps an invalid stored schema to LLM_PROFILE_INVALID with its sanitized issues', async () => {
    const registry = new InMemoryPromptRegistry();
    registry.putRawDocument('schemas', 'llm_report_output_v1', {
      schemaId: 'llm_report_output_v1',
      kind: 'LLM_REPORT_OUTPUT',
    });
    const error = expectInvalid(
      await resolveLlmProfile(profile(), { registry, provider: 'gemini' }),
      'structuredOutput.schemaId',
    );
    expect(error.details['issues']).toContainEqual({ path: '/', keyword: 'required' });
  });

  it('does not read the registry for a schemaId off the convention', async () => {
    let reads = 0;
    const registry: PromptRegistry = {
      getPrompt: async () => null,
      getSchema: async () => {
        reads += 1;
        return null;
      },
    };
    expectInvalid(
      await resolveLlmProfile(profile({ structuredOutput: { schemaId: 'other_v1' } }), {
        registry,
        provider: 'gemini',
      }),
      'structuredOutput.schemaId',
    );
    expect(reads).toBe(0);
    expect(llmProfileSchemaId(profile())).toBe('llm_report_output_v1');
    expect(llmProfileSchemaId({})).toBeUndefined();
  });
});

describe('validateLlmProfile for LLM_RECOMMENDATION (kind LLM_RECOMMENDATION_OUTPUT)', () => {
  const reco = (overrides: Record<string, unknown> = {}): Record<string, unknown> =>
    profile({ structuredOutput: { schemaId: 'llm_recommendation_output_v1' }, ...overrides });
  const foundReco: SchemaLookupResult = { status: 'found', schema: defaultRecommendationSchema() };
  const checkReco = (p: unknown, schema: SchemaLookupResult = foundReco): LlmProfileValidation =>
    validateLlmProfile(p, { schema, provider: 'gemini', kind: 'LLM_RECOMMENDATION_OUTPUT' });

  it('accepts llm_recommendation_output_v<N> of its kind and reads the version from it', () => {
    const result = checkReco(reco());
    expect(result.ok && result.config.schemaVersion).toBe(1);
    expect(result.ok && result.config.schemaId).toBe('llm_recommendation_output_v1');
  });

  it('refuses a report schema id, a schema of the report kind and one without the invariants', () => {
    const wrongId = expectInvalid(checkReco(profile()), 'structuredOutput.schemaId');
    expect(wrongId.message).toContain('does not follow llm_recommendation_output_v{N}');
    const reportKind: LlmSchema = {
      ...defaultReportSchema(),
      schemaId: 'llm_recommendation_output_v1',
    };
    const kind = expectInvalid(
      checkReco(reco(), { status: 'found', schema: reportKind }),
      'structuredOutput.schemaId',
    );
    expect(kind.message).toContain('not LLM_RECOMMENDATION_OUTPUT');
    const broken: LlmSchema = {
      ...defaultRecommendationSchema(),
      jsonSchema: { type: 'object', required: ['action'], properties: {} },
    };
    const invariants = expectInvalid(
      checkReco(reco(), { status: 'found', schema: broken }),
      'structuredOutput.schemaId',
    );
    expect(invariants.message).toContain('minimal invariants');
  });

  it('names the step type in its step rules', () => {
    const error = expectInvalid(checkReco(reco({ candidateCount: 2 })), 'candidateCount');
    expect(error.message).toBe(
      'llmProfile.candidateCount: must be 1 for LLM_RECOMMENDATION (single-candidate structured output)',
    );
  });

  it('resolves through the registry with the kind', async () => {
    const registry = new InMemoryPromptRegistry({ schemas: [defaultRecommendationSchema()] });
    const result = await resolveLlmProfile(reco(), {
      registry,
      provider: 'offline',
      kind: 'LLM_RECOMMENDATION_OUTPUT',
    });
    expect(result.ok).toBe(true);
    // without the kind, the report convention applies
    expectInvalid(
      await resolveLlmProfile(reco(), { registry, provider: 'offline' }),
      'structuredOutput.schemaId',
    );
  });
});
