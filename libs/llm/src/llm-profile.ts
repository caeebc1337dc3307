import {
  type LlmProfile,
  type LlmSchema,
  type LlmSchemaKind,
  type ValidationIssue,
  validate,
} from '@tda/contracts';
import type { LlmGenerationConfig, LlmProvider } from './llm-client.port';
import { LlmProfileError, RegistryDocumentInvalidError } from './llm.errors';
import {
  computeSchemaSha256,
  OUTPUT_KIND_RULES,
  type OutputKindRules,
  type OutputSchemaValidator,
  OutputSchemaCompileError,
  OutputSchemaValidatorCache,
} from './output-schema';
import type { PromptRegistry } from './prompt-registry.port';

/** The only response MIME type an LLM step accepts (seed 002: no markdown-only fallback). */
export const REPORT_RESPONSE_MIME_TYPE = 'application/json';

/** Model name prefix the Gemini/Vertex providers accept (decision, see README). */
export const GEMINI_MODEL_PREFIX = 'gemini-';

/** What the registry said about the schema the profile names. */
export type SchemaLookupResult =
  | { status: 'found'; schema: LlmSchema }
  | { status: 'missing' }
  | { status: 'invalid'; error: RegistryDocumentInvalidError };

/** The request config the worker uses, exactly the profile's (no merging), plus the schema. */
export interface EffectiveLlmConfig {
  provider: LlmProvider;
  model: string;
  generationConfig: LlmGenerationConfig & {
    responseMimeType: typeof REPORT_RESPONSE_MIME_TYPE;
    responseJsonSchema: Record<string, unknown>;
  };
  schemaId: string;
  /** N of llm_report_output_v{N} (llm_recommendation_output_v{N}): the artifact's metadata.schemaVersion. */
  schemaVersion: number;
  /** Computed from the registry schema (canonical JSON, sorted keys). */
  schemaSha256: string;
  /** Compiled validator of the registry schema (cached by schemaSha256). */
  validator: OutputSchemaValidator;
  /**
   * Set when the profile's informational structuredOutput.schemaSha256 differs from the computed
   * one. Never a failure (seed 002); the caller logs it.
   */
  schemaSha256Mismatch?: { profile: string; registry: string };
}

export type LlmProfileValidation =
  { ok: true; config: EffectiveLlmConfig } | { ok: false; error: LlmProfileError };

export interface ValidateLlmProfileOptions {
  /** The registry lookup of `structuredOutput.schemaId` (see llmProfileSchemaId). */
  schema: SchemaLookupResult;
  /** The provider of the client that will run the request (model name rule differs). */
  provider: LlmProvider;
  /** Shared validator cache; a private one when omitted. */
  validators?: OutputSchemaValidatorCache;
  /** Which output the step expects (default LLM_REPORT_OUTPUT): its schemaId convention and invariants. */
  kind?: LlmSchemaKind;
}

/** A failed pre-flight check: always LLM_PROFILE_INVALID naming the field. */
type LlmProfileFailure = Extract<LlmProfileValidation, { ok: false }>;

function fail(
  field: string,
  message: string,
  details: Record<string, unknown> = {},
): LlmProfileFailure {
  return {
    ok: false,
    error: new LlmProfileError(field, `llmProfile.${field}: ${message}`, { field, ...details }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `structuredOutput.schemaId` of a raw profile (what to look up), when it is a string. */
export function llmProfileSchemaId(profile: unknown): string | undefined {
  if (!isObject(profile) || !isObject(profile['structuredOutput'])) return undefined;
  const schemaId = profile['structuredOutput']['schemaId'];
  return typeof schemaId === 'string' ? schemaId : undefined;
}

function fieldOf(path: string): string {
  const field = path.replace(/^\//, '').split('/').join('.');
  return field === '' ? '(root)' : field;
}

/**
 * seed 002 pre-flight checks of `steps.<id>.inputs.llm.llmProfile` for an LLM step (LLM_REPORT by
 * default, LLM_RECOMMENDATION with `kind: 'LLM_RECOMMENDATION_OUTPUT'`), before any model call.
 * The profile is authoritative: nothing is merged from prompt or model defaults, and every rule
 * failure is LLM_PROFILE_INVALID naming the field. Pure (the schema lookup is done by the caller
 * or by resolveLlmProfile).
 */
export function validateLlmProfile(
  profile: unknown,
  options: ValidateLlmProfileOptions,
): LlmProfileValidation {
  const contract = validate.llmProfile(profile);
  if (!contract.ok) return contractFailure(contract.issues);
  const p: LlmProfile = contract.value;
  const rules = OUTPUT_KIND_RULES[options.kind ?? 'LLM_REPORT_OUTPUT'];
  // The checks run in a fixed order: the first broken rule is the one reported.
  const requestProblem = checkRequestFields(p, options.provider, rules.stepType);
  if (requestProblem !== undefined) return requestProblem;
  const reference = schemaReferenceOf(p, rules);
  if (!reference.ok) return reference;
  const { schemaId, schemaVersion, declaredSha256 } = reference;
  const registry = registrySchemaOf(options.schema, schemaId, rules);
  if (!registry.ok) return registry;
  const compiled = compileValidator(registry.schema, schemaId, options.validators);
  if (!compiled.ok) return compiled;
  const schemaSha256 = computeSchemaSha256(registry.schema.jsonSchema);
  const config: EffectiveLlmConfig = {
    provider: options.provider,
    model: p.modelName,
    generationConfig: generationConfigOf(p, registry.schema),
    schemaId,
    schemaVersion,
    schemaSha256,
    validator: compiled.validator,
  };
  if (declaredSha256 !== undefined && declaredSha256 !== schemaSha256) {
    config.schemaSha256Mismatch = { profile: declaredSha256, registry: schemaSha256 };
  }
  return { ok: true, config };
}

/** The profile breaks its contract: report the first issue, by the field a user would edit. */
function contractFailure(issues: readonly ValidationIssue[]): LlmProfileFailure {
  const first = issues[0];
  let field = first === undefined ? '(root)' : fieldOf(first.path);
  // an unknown parameter: name the parameter itself rather than its parent object
  const unknown =
    first?.keyword === 'additionalProperties'
      ? /unknown field '([^']+)'/.exec(first.message)
      : null;
  if (unknown?.[1] !== undefined)
    field = field === '(root)' ? unknown[1] : `${field}.${unknown[1]}`;
  return fail(field, first?.message ?? 'does not match the llm_profile contract', {
    issues: issues.slice(0, 10).map((i) => ({ path: i.path, keyword: i.keyword })),
  });
}

/** The request parameters an LLM step cannot honour (model family, candidates, MIME, inline schema). */
function checkRequestFields(
  p: LlmProfile,
  provider: LlmProvider,
  step: OutputKindRules['stepType'],
): LlmProfileFailure | undefined {
  if (provider !== 'offline' && !p.modelName.startsWith(GEMINI_MODEL_PREFIX)) {
    return fail('modelName', `provider '${provider}' accepts only ${GEMINI_MODEL_PREFIX}* models`, {
      provider,
    });
  }
  if (p.candidateCount !== undefined && p.candidateCount !== 1) {
    return fail('candidateCount', `must be 1 for ${step} (single-candidate structured output)`, {
      value: p.candidateCount,
    });
  }
  if (p.responseMimeType !== REPORT_RESPONSE_MIME_TYPE) {
    return fail(
      'responseMimeType',
      `must be '${REPORT_RESPONSE_MIME_TYPE}' for ${step} (no markdown-only fallback)`,
      p.responseMimeType === undefined ? {} : { value: p.responseMimeType },
    );
  }
  // Decision: inline schemas are rejected for LLM steps. An artifact records schemaId and
  // schemaVersion (llm_report_output_v<N>, ...); an inline schema has neither.
  for (const inline of ['responseSchema', 'jsonSchema'] as const) {
    if (p[inline] !== undefined) {
      return fail(
        inline,
        `inline schemas are not supported for ${step}; use structuredOutput.schemaId`,
      );
    }
  }
  return undefined;
}

/** structuredOutput: required, and its schemaId must follow the kind's naming convention. */
function schemaReferenceOf(
  p: LlmProfile,
  rules: OutputKindRules,
):
  | { ok: true; schemaId: string; schemaVersion: number; declaredSha256: string | undefined }
  | LlmProfileFailure {
  if (p.structuredOutput === undefined) {
    return fail('structuredOutput.schemaId', `is required for ${rules.stepType}`);
  }
  const { schemaId, schemaSha256 } = p.structuredOutput;
  const schemaVersion = rules.parseSchemaId(schemaId);
  if (schemaVersion === null) {
    return fail(
      'structuredOutput.schemaId',
      `'${schemaId}' does not follow ${rules.schemaIdPrefix}{N}`,
    );
  }
  return { ok: true, schemaId, schemaVersion, declaredSha256: schemaSha256 };
}

/** The registry's schema must exist, be the one asked for, of the step's kind and invariants. */
function registrySchemaOf(
  lookup: SchemaLookupResult,
  schemaId: string,
  rules: OutputKindRules,
): { ok: true; schema: LlmSchema } | LlmProfileFailure {
  if (lookup.status === 'missing') {
    return fail('structuredOutput.schemaId', `schema '${schemaId}' does not exist in the registry`);
  }
  if (lookup.status === 'invalid') {
    return fail('structuredOutput.schemaId', `registry schema '${schemaId}' is invalid`, {
      issues: lookup.error.issues,
    });
  }
  const schema = lookup.schema;
  if (schema.schemaId !== schemaId) {
    return fail('structuredOutput.schemaId', `registry returned schema '${schema.schemaId}'`);
  }
  if (schema.kind !== rules.kind) {
    return fail(
      'structuredOutput.schemaId',
      `registry schema '${schemaId}' has kind ${schema.kind}, not ${rules.kind}`,
    );
  }
  const problems = rules.checkInvariants(schema.jsonSchema);
  if (problems.length > 0) {
    return fail(
      'structuredOutput.schemaId',
      `registry schema '${schemaId}' breaks the minimal invariants: ${problems.join('; ')}`,
      {
        problems,
      },
    );
  }
  return { ok: true, schema };
}

/** A schema our validator cannot compile is a profile problem, caught before any model call. */
function compileValidator(
  schema: LlmSchema,
  schemaId: string,
  validators: OutputSchemaValidatorCache | undefined,
): { ok: true; validator: OutputSchemaValidator } | LlmProfileFailure {
  try {
    const validator = (validators ?? new OutputSchemaValidatorCache()).get(schema.jsonSchema);
    return { ok: true, validator };
  } catch (error) {
    if (!(error instanceof OutputSchemaCompileError)) throw error;
    return fail(
      'structuredOutput.schemaId',
      `registry schema '${schemaId}' is unsupported: ${error.message}`,
    );
  }
}

/** Exactly the profile's parameters (no defaults merged), plus the registry schema (a copy). */
function generationConfigOf(
  p: LlmProfile,
  schema: LlmSchema,
): EffectiveLlmConfig['generationConfig'] {
  const generationConfig: EffectiveLlmConfig['generationConfig'] = {
    responseMimeType: REPORT_RESPONSE_MIME_TYPE,
    responseJsonSchema: structuredClone(schema.jsonSchema),
  };
  if (p.temperature !== undefined) generationConfig.temperature = p.temperature;
  if (p.topP !== undefined) generationConfig.topP = p.topP;
  if (p.topK !== undefined) generationConfig.topK = p.topK;
  if (p.maxOutputTokens !== undefined) generationConfig.maxOutputTokens = p.maxOutputTokens;
  if (p.stopSequences !== undefined) generationConfig.stopSequences = [...p.stopSequences];
  if (p.candidateCount !== undefined) generationConfig.candidateCount = p.candidateCount;
  if (p.thinkingConfig !== undefined) generationConfig.thinkingConfig = { ...p.thinkingConfig };
  return generationConfig;
}

/**
 * validateLlmProfile with the registry lookup done here: a missing schemaId or one off the kind's
 * convention (llm_report_output_v{N}, llm_recommendation_output_v{N}) is rejected without a
 * registry read.
 */
export async function resolveLlmProfile(
  profile: unknown,
  options: {
    registry: PromptRegistry;
    provider: LlmProvider;
    validators?: OutputSchemaValidatorCache;
    kind?: LlmSchemaKind;
  },
): Promise<LlmProfileValidation> {
  const schemaId = llmProfileSchemaId(profile);
  const kind = options.kind ?? 'LLM_REPORT_OUTPUT';
  let schema: SchemaLookupResult = { status: 'missing' };
  if (schemaId !== undefined && OUTPUT_KIND_RULES[kind].parseSchemaId(schemaId) !== null) {
    try {
      const found = await options.registry.getSchema(schemaId);
      schema = found === null ? { status: 'missing' } : { status: 'found', schema: found };
    } catch (error) {
      if (!(error instanceof RegistryDocumentInvalidError)) throw error;
      schema = { status: 'invalid', error };
    }
  }
  const base = { schema, provider: options.provider, kind };
  return validateLlmProfile(
    profile,
    options.validators === undefined ? base : { ...base, validators: options.validators },
  );
}
