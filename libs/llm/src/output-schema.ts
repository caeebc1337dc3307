import { createHash } from 'node:crypto';
import { LLM_REPORT_SCHEMA_ID_PATTERN, TdaError, type LlmSchemaKind } from '@tda/contracts';
import Ajv2020 from 'ajv/dist/2020';

/**
 * The model-owned output schema (llm_schemas/{schemaId}.jsonSchema): its id convention, its
 * seed 002 minimal invariants, its hash, and a runtime validator for model output.
 */

export type JsonSchemaObject = Record<string, unknown>;

/**
 * JSON with object keys sorted at every depth (arrays keep their order). Firestore returns map
 * fields in its own order, so the hash must not depend on key order to stay stable across a
 * round trip through the registry.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const source = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(source)
        .sort()
        .map((key) => [key, sortKeys(source[key])]),
    );
  }
  return value;
}

/** sha256 (hex) of canonicalJson(jsonSchema): informational only (seed 002, never enforced). */
export function computeSchemaSha256(jsonSchema: JsonSchemaObject): string {
  return createHash('sha256').update(canonicalJson(jsonSchema), 'utf8').digest('hex');
}

/**
 * N of `llm_report_output_v{N}` (or of `llm_aggregate_report_output_v{N}`, flow 3's aggregated
 * report format), or null when the id does not follow the convention.
 */
export function parseReportSchemaId(schemaId: string): number | null {
  if (!LLM_REPORT_SCHEMA_ID_PATTERN.test(schemaId)) return null;
  const version = Number(schemaId.slice(schemaId.lastIndexOf('_v') + 2));
  return Number.isSafeInteger(version) && version >= 1 ? version : null;
}

/** An aggregated report's output format (`llm_aggregate_report_output_v{N}`, with citations). */
export function isAggregateReportSchemaId(schemaId: string): boolean {
  return (
    schemaId.startsWith('llm_aggregate_report_output_v') && parseReportSchemaId(schemaId) !== null
  );
}

/** llm_recommendation_output_v<N> (llm_schema.schema.json $defs/LlmRecommendationSchemaId). */
export const LLM_RECOMMENDATION_SCHEMA_ID_PATTERN = /^llm_recommendation_output_v[1-9][0-9]*$/;

/** N of `llm_recommendation_output_v{N}`, or null when the id does not follow the convention. */
export function parseRecommendationSchemaId(schemaId: string): number | null {
  if (!LLM_RECOMMENDATION_SCHEMA_ID_PATTERN.test(schemaId)) return null;
  const version = Number(schemaId.slice('llm_recommendation_output_v'.length));
  return Number.isSafeInteger(version) && version >= 1 ? version : null;
}

/**
 * What an LLM step type expects of its registry schema (seed 002 pre-flight): the kind, the
 * schemaId convention (`<prefix>{N}`, N = the artifact's metadata.schemaVersion) and the minimal
 * invariants of the jsonSchema. LLM_REPORT reads LLM_REPORT_OUTPUT schemas, LLM_RECOMMENDATION
 * LLM_RECOMMENDATION_OUTPUT ones.
 */
export interface OutputKindRules {
  kind: LlmSchemaKind;
  /** The step type named in pre-flight messages. */
  stepType: 'LLM_REPORT' | 'LLM_RECOMMENDATION';
  /** `llm_report_output_v` / `llm_recommendation_output_v`. */
  schemaIdPrefix: string;
  parseSchemaId(schemaId: string): number | null;
  checkInvariants(jsonSchema: unknown): string[];
}

export const OUTPUT_KIND_RULES: Readonly<Record<LlmSchemaKind, OutputKindRules>> = {
  LLM_REPORT_OUTPUT: {
    kind: 'LLM_REPORT_OUTPUT',
    stepType: 'LLM_REPORT',
    schemaIdPrefix: 'llm_report_output_v',
    parseSchemaId: parseReportSchemaId,
    checkInvariants: (jsonSchema) => checkReportSchemaInvariants(jsonSchema),
  },
  LLM_RECOMMENDATION_OUTPUT: {
    kind: 'LLM_RECOMMENDATION_OUTPUT',
    stepType: 'LLM_RECOMMENDATION',
    schemaIdPrefix: 'llm_recommendation_output_v',
    parseSchemaId: parseRecommendationSchemaId,
    checkInvariants: (jsonSchema) => checkRecommendationSchemaInvariants(jsonSchema),
  },
};

function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function requires(schema: Record<string, unknown>, field: string): boolean {
  const required = schema['required'];
  return Array.isArray(required) && required.includes(field);
}

/**
 * seed 002 minimal invariants of an LLM_REPORT_OUTPUT schema: an object schema requiring
 * `summary` (an object requiring a string `markdown`) and `details` (an object). Returns the
 * problems, each naming the schema location; [] when the schema satisfies them.
 */
export function checkReportSchemaInvariants(jsonSchema: unknown): string[] {
  const root = asObject(jsonSchema);
  if (root === null) return ['jsonSchema must be an object'];
  const problems: string[] = [];
  if (root['type'] !== 'object') problems.push("jsonSchema.type must be 'object'");
  for (const field of ['summary', 'details']) {
    if (!requires(root, field)) problems.push(`jsonSchema.required must include '${field}'`);
  }
  const properties = asObject(root['properties']);
  const summary = asObject(properties?.['summary']);
  if (summary === null) {
    problems.push('jsonSchema.properties.summary must be defined');
  } else {
    if (summary['type'] !== 'object') {
      problems.push("jsonSchema.properties.summary.type must be 'object'");
    }
    if (!requires(summary, 'markdown')) {
      problems.push("jsonSchema.properties.summary.required must include 'markdown'");
    }
    const markdown = asObject(asObject(summary['properties'])?.['markdown']);
    if (markdown?.['type'] !== 'string') {
      problems.push("jsonSchema.properties.summary.properties.markdown.type must be 'string'");
    }
  }
  const details = asObject(properties?.['details']);
  if (details?.['type'] !== 'object') {
    problems.push("jsonSchema.properties.details.type must be 'object'");
  }
  return problems;
}

/** The fields llm_recommendation.schema.json requires, and the actions it knows. */
const RECOMMENDATION_REQUIRED = [
  'action',
  'signal_strength',
  'headline',
  'horizon',
  'rationale',
  'risks',
] as const;
const RECOMMENDATION_ACTIONS = ['BUY', 'SELL', 'HOLD', 'REDUCE'] as const;

/**
 * Minimal invariants of an LLM_RECOMMENDATION_OUTPUT schema (llm_schema.schema.json
 * RecommendationOutputSchemaInvariants): an object schema requiring the contract's required
 * fields, with `action` a string enum of the four actions and `rationale` an object. Returns the
 * problems, each naming the schema location; [] when the schema satisfies them.
 */
export function checkRecommendationSchemaInvariants(jsonSchema: unknown): string[] {
  const root = asObject(jsonSchema);
  if (root === null) return ['jsonSchema must be an object'];
  const problems: string[] = [];
  if (root['type'] !== 'object') problems.push("jsonSchema.type must be 'object'");
  for (const field of RECOMMENDATION_REQUIRED) {
    if (!requires(root, field)) problems.push(`jsonSchema.required must include '${field}'`);
  }
  const properties = asObject(root['properties']);
  const action = asObject(properties?.['action']);
  const actions = action?.['enum'];
  if (
    action?.['type'] !== 'string' ||
    !Array.isArray(actions) ||
    !RECOMMENDATION_ACTIONS.every((a) => actions.includes(a))
  ) {
    problems.push(
      `jsonSchema.properties.action must be a string enum of ${RECOMMENDATION_ACTIONS.join('|')}`,
    );
  }
  if (asObject(properties?.['rationale'])?.['type'] !== 'object') {
    problems.push("jsonSchema.properties.rationale.type must be 'object'");
  }
  return problems;
}

/** One validation error of model output: location and keyword, never the offending value. */
export interface OutputValidationError {
  /** JSON Pointer into the output; keys the schema does not declare are replaced by `*`. */
  path: string;
  keyword: string;
  /** Built from the keyword and schema-side parameters only. */
  message: string;
}

export const MAX_REPORTED_VALIDATION_ERRORS = 10;

export type OutputValidationResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; errors: OutputValidationError[]; errorCount: number };

/** A compiled registry schema. */
export interface OutputSchemaValidator {
  readonly schemaSha256: string;
  validate(data: unknown): OutputValidationResult;
}

/** The schema does not compile (unsupported keyword value, bad pattern, broken $ref...). */
export class OutputSchemaCompileError extends TdaError {
  constructor(message: string) {
    super('LLM_PROFILE_INVALID', message, { retryable: false });
  }
}

interface AjvErrorLike {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** Every property name the schema declares anywhere: the only keys a reported path may show. */
function declaredPropertyNames(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) declaredPropertyNames(item, into);
    return into;
  }
  const object = asObject(schema);
  if (object === null) return into;
  for (const [key, child] of Object.entries(object)) {
    if (key === 'properties' || key === 'required') {
      const names = Array.isArray(child) ? child : Object.keys(asObject(child) ?? {});
      for (const name of names) if (typeof name === 'string') into.add(name);
    }
    declaredPropertyNames(child, into);
  }
  return into;
}

function sanitizePath(pointer: string, declared: ReadonlySet<string>): string {
  if (pointer === '') return '/';
  return pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) =>
      /^(0|[1-9][0-9]{0,5})$/.test(segment) || declared.has(segment) ? segment : '*',
    )
    .map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
}

/** The message of one error from the keyword and schema-side params (never from the data). */
function describeError(error: AjvErrorLike): string {
  const p = error.params;
  const str = (key: string): string => {
    const value = p[key];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '?';
  };
  switch (error.keyword) {
    case 'required':
      return `missing required property '${str('missingProperty')}'`;
    case 'type':
      return `must be of type ${Array.isArray(p['type']) ? p['type'].join('|') : str('type')}`;
    case 'enum':
      return `must be one of ${JSON.stringify(p['allowedValues'])}`;
    case 'const':
      return `must be ${JSON.stringify(p['allowedValue'])}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${str('comparison')} ${str('limit')}`;
    case 'minItems':
      return `must have at least ${str('limit')} items`;
    case 'maxItems':
      return `must have at most ${str('limit')} items`;
    case 'minLength':
      return `must be at least ${str('limit')} characters long`;
    case 'maxLength':
      return `must be at most ${str('limit')} characters long`;
    case 'minProperties':
    case 'maxProperties':
      return `must satisfy ${error.keyword} ${str('limit')}`;
    case 'pattern':
      return `must match the pattern ${str('pattern')}`;
    case 'format':
      return `must be a valid ${str('format')}`;
    case 'additionalProperties':
    case 'unevaluatedProperties':
      // the extra key is model-chosen text: it is not named
      return 'has a property the schema does not allow';
    case 'uniqueItems':
      return 'must not contain duplicate items';
    default:
      return `must satisfy '${error.keyword}'`;
  }
}

/**
 * Compiles registry schemas with ajv (JSON Schema 2020-12) and caches the validators by
 * schemaSha256: a worker validates every output of a schema version with one compilation.
 * `strict: false` because provider-oriented schemas may carry keywords ajv does not know
 * (e.g. propertyOrdering); they are ignored, not errors.
 */
export class OutputSchemaValidatorCache {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly cache = new Map<string, OutputSchemaValidator>();

  /** Throws OutputSchemaCompileError when the schema does not compile. */
  get(jsonSchema: JsonSchemaObject): OutputSchemaValidator {
    const schemaSha256 = computeSchemaSha256(jsonSchema);
    const cached = this.cache.get(schemaSha256);
    if (cached !== undefined) return cached;
    let compiled: ReturnType<Ajv2020['compile']>;
    try {
      // a copy without $id: two schema versions with the same $id must not collide in ajv
      const { $id: _ignored, ...schema } = jsonSchema;
      compiled = this.ajv.compile(schema);
    } catch (error) {
      // ajv's message names the schema problem (keyword/path); it never contains output data
      const message = error instanceof Error ? error.message : String(error);
      throw new OutputSchemaCompileError(
        `the output schema does not compile: ${message.slice(0, 300)}`,
      );
    }
    const declared = declaredPropertyNames(jsonSchema);
    const validator: OutputSchemaValidator = {
      schemaSha256,
      validate(data: unknown): OutputValidationResult {
        if (compiled(data)) {
          const object = asObject(data);
          if (object !== null) return { ok: true, value: object };
          // a schema that accepts a non-object cannot describe a report output
          return {
            ok: false,
            errorCount: 1,
            errors: [{ path: '/', keyword: 'type', message: 'must be of type object' }],
          };
        }
        const raw = (compiled.errors ?? []) as AjvErrorLike[];
        const seen = new Set<string>();
        const errors: OutputValidationError[] = [];
        for (const error of raw) {
          const entry = {
            path: sanitizePath(error.instancePath, declared),
            keyword: error.keyword,
            message: describeError(error),
          };
          const key = `${entry.path}|${entry.keyword}|${entry.message}`;
          if (seen.has(key)) continue;
          seen.add(key);
          errors.push(entry);
        }
        return {
          ok: false,
          errorCount: errors.length,
          errors: errors.slice(0, MAX_REPORTED_VALIDATION_ERRORS),
        };
      },
    };
    this.cache.set(schemaSha256, validator);
    return validator;
  }

  get size(): number {
    return this.cache.size;
  }
}
