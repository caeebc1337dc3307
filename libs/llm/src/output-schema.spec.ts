import { describe, expect, it } from 'vitest';
import { defaultReportSchema } from './default-registry';
import {
  canonicalJson,
  checkReportSchemaInvariants,
  computeSchemaSha256,
  MAX_REPORTED_VALIDATION_ERRORS,
  OutputSchemaCompileError,
  OutputSchemaValidatorCache,
  parseReportSchemaId,
} from './output-schema';
import { validReportOutput } from './testing';

describe('canonicalJson / computeSchemaSha256', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same hash whatever the key order, a different one for different content', () => {
    const a = { type: 'object', required: ['x'], properties: { x: { type: 'string' } } };
    const b = { properties: { x: { type: 'string' } }, required: ['x'], type: 'object' };
    expect(computeSchemaSha256(a)).toBe(computeSchemaSha256(b));
    expect(computeSchemaSha256(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(computeSchemaSha256({ ...a, required: [] })).not.toBe(computeSchemaSha256(a));
  });
});

describe('parseReportSchemaId', () => {
  it.each([
    ['llm_report_output_v1', 1],
    ['llm_report_output_v12', 12],
    ['llm_report_output_v0', null],
    ['llm_report_output_v01', null],
    ['llm_report_output', null],
    ['llm_recommendation_output_v1', null],
    ['llm_report_output_v1x', null],
    ['LLM_REPORT_OUTPUT_V1', null],
  ])('%s -> %s', (id, version) => {
    expect(parseReportSchemaId(id)).toBe(version);
  });
});

describe('checkReportSchemaInvariants', () => {
  const base = defaultReportSchema().jsonSchema;
  const properties = base['properties'] as Record<string, Record<string, unknown>>;

  it('accepts the default schema', () => {
    expect(checkReportSchemaInvariants(base)).toEqual([]);
  });

  it('requires summary and details at the output level', () => {
    expect(checkReportSchemaInvariants({ ...base, required: ['summary'] })).toEqual([
      "jsonSchema.required must include 'details'",
    ]);
    expect(checkReportSchemaInvariants({ ...base, required: undefined })).toHaveLength(2);
  });

  it('requires summary.markdown as a string', () => {
    const summary = properties['summary'] ?? {};
    expect(
      checkReportSchemaInvariants({
        ...base,
        properties: { ...properties, summary: { ...summary, required: [] } },
      }),
    ).toEqual(["jsonSchema.properties.summary.required must include 'markdown'"]);
    expect(
      checkReportSchemaInvariants({
        ...base,
        properties: {
          ...properties,
          summary: { ...summary, properties: { markdown: { type: 'number' } } },
        },
      }),
    ).toEqual(["jsonSchema.properties.summary.properties.markdown.type must be 'string'"]);
  });

  it('requires details to be an object and the root to be an object schema', () => {
    expect(
      checkReportSchemaInvariants({
        ...base,
        properties: { ...properties, details: { type: 'array' } },
      }),
    ).toEqual(["jsonSchema.properties.details.type must be 'object'"]);
    expect(checkReportSchemaInvariants({ ...base, type: 'array' })).toEqual([
      "jsonSchema.type must be 'object'",
    ]);
    expect(checkReportSchemaInvariants([])).toEqual(['jsonSchema must be an object']);
  });
});

describe('OutputSchemaValidatorCache', () => {
  const schema = defaultReportSchema().jsonSchema;

  it('accepts a valid output and returns it', () => {
    const validator = new OutputSchemaValidatorCache().get(schema);
    const output = validReportOutput();
    expect(validator.validate(output)).toEqual({ ok: true, value: output });
    expect(validator.schemaSha256).toBe(computeSchemaSha256(schema));
  });

  it('caches compiled validators by schemaSha256', () => {
    const cache = new OutputSchemaValidatorCache();
    const first = cache.get(schema);
    const reordered = JSON.parse(canonicalJson(schema)) as Record<string, unknown>;
    expect(cache.get(reordered)).toBe(first);
    expect(cache.size).toBe(1);
    cache.get({ type: 'object' });
    expect(cache.size).toBe(2);
  });

  it('reports paths and keywords, never the offending values or undeclared keys', () => {
    const canary = 'CANARY-VALUE-9d2f';
    const output = validReportOutput();
    const details = output['details'] as Record<string, unknown>;
    details['trend'] = { direction: canary, strength: 'strong' };
    details['indicators'] = [{ name: canary, signal: canary, comment: 1 }];
    const cache = new OutputSchemaValidatorCache();
    const strict = cache.get({
      type: 'object',
      properties: { summary: { type: 'object', additionalProperties: { type: 'number' } } },
    });
    const result = cache.get(schema).validate(output);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toContainEqual({
      path: '/details/trend',
      keyword: 'required',
      message: "missing required property 'rationale'",
    });
    expect(result.errors).toContainEqual({
      path: '/details/trend/direction',
      keyword: 'enum',
      message: 'must be one of ["bullish","bearish","sideways"]',
    });
    expect(result.errors).toContainEqual({
      path: '/details/indicators/0/comment',
      keyword: 'type',
      message: 'must be of type string',
    });
    expect(JSON.stringify(result)).not.toContain(canary);
    // a key the model invented shows up as '*'
    const keyed = strict.validate({ summary: { [canary]: 'text' } });
    expect(keyed.ok).toBe(false);
    if (keyed.ok) return;
    expect(keyed.errors).toEqual([
      { path: '/summary/*', keyword: 'type', message: 'must be of type number' },
    ]);
  });

  it('caps the reported errors at 10 but counts them all', () => {
    const validator = new OutputSchemaValidatorCache().get({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'string' } } },
    });
    const result = validator.validate({ items: Array.from({ length: 25 }, (_, i) => i) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errorCount).toBe(25);
    expect(result.errors).toHaveLength(MAX_REPORTED_VALIDATION_ERRORS);
    expect(result.errors[3]?.path).toBe('/items/3');
  });

  it('rejects non-object outputs even when the schema would accept them', () => {
    const result = new OutputSchemaValidatorCache().get({}).validate([1, 2]);
    expect(result).toMatchObject({ ok: false, errors: [{ path: '/', keyword: 'type' }] });
  });

  it('throws OutputSchemaCompileError for a schema that does not compile', () => {
    const cache = new OutputSchemaValidatorCache();
    expect(() =>
      cache.get({ type: 'object', properties: { a: { type: 'no-such-type' } } }),
    ).toThrow(OutputSchemaCompileError);
    expect(() => cache.get({ $ref: '#/$defs/missing' })).toThrow(OutputSchemaCompileError);
  });
});
