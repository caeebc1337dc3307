import { validate } from '@tda/contracts';
import { loadExample, readSchema } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEMAS, defaultRecommendationSchema } from './default-registry';
import { checkRecommendationSchemaInvariants, OutputSchemaValidatorCache } from './output-schema';

type Node = Record<string, unknown>;

function asNode(value: unknown): Node | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Node)
    : undefined;
}

/** Keywords the registry schema may use (the model's subset, llm_schema.schema.json). */
const MODEL_SUBSET = new Set([
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'description',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
]);

interface Shape {
  path: string;
  type: unknown;
  required: string[];
  properties: string[];
  enum?: unknown[];
}

/**
 * The structure both schemas must agree on, node by node: type, required fields, property names
 * and enums. A `$ref` of the contract (ReportId) is a string leaf.
 */
function shapes(schema: unknown, path = ''): Shape[] {
  const node = asNode(schema);
  if (node === undefined) return [];
  const type = node['$ref'] !== undefined ? 'string' : node['type'];
  const properties = asNode(node['properties']) ?? {};
  const shape: Shape = {
    path: path === '' ? '/' : path,
    type,
    required: [...((node['required'] as string[] | undefined) ?? [])].sort(),
    properties: Object.keys(properties).sort(),
    ...(Array.isArray(node['enum']) ? { enum: [...(node['enum'] as unknown[])] } : {}),
  };
  return [
    shape,
    ...Object.entries(properties).flatMap(([name, child]) => shapes(child, `${path}/${name}`)),
    ...shapes(node['items'], `${path}/[]`),
  ];
}

function keywords(schema: unknown, into = new Set<string>()): Set<string> {
  const node = asNode(schema);
  if (node === undefined) return into;
  for (const [key, value] of Object.entries(node)) {
    into.add(key);
    if (key === 'properties') {
      for (const child of Object.values(asNode(value) ?? {})) keywords(child, into);
    } else if (key === 'items') {
      keywords(value, into);
    }
  }
  return into;
}

describe('llm_recommendation_output_v1 (registry) mirrors llm_recommendation.schema.json', () => {
  const registry = defaultRecommendationSchema();
  const contract = readSchema('llm_recommendation');

  it('agrees with the contract on every type, required field, property and enum', () => {
    // v1 is the contract without flow 6's optional rationale.newsCitations; v2 is all of it.
    const withoutNews = shapes(contract)
      .filter((s) => !s.path.startsWith('/rationale/newsCitations'))
      .map((s) =>
        s.path === '/rationale'
          ? { ...s, properties: s.properties.filter((p) => p !== 'newsCitations') }
          : s,
      );
    expect(shapes(registry.jsonSchema)).toEqual(withoutNews);
    const v2 = DEFAULT_SCHEMAS.find((s) => s.schemaId === 'llm_recommendation_output_v2');
    expect(shapes(v2?.jsonSchema)).toEqual(shapes(contract));
    expect(checkRecommendationSchemaInvariants(v2?.jsonSchema ?? {})).toEqual([]);
  });

  it('validates the contract example with both schemas', () => {
    const example = loadExample('llm_recommendation.example.json');
    const checked = validate.llmRecommendation(example);
    expect(checked.ok ? [] : checked.issues).toEqual([]);
    const validator = new OutputSchemaValidatorCache().get(registry.jsonSchema);
    expect(validator.validate(example)).toMatchObject({ ok: true });
    // The file example embeds the same output.
    const file = loadExample('llm_recommendation_file.example.json') as { output: unknown };
    expect(file.output).toEqual(example);
  });

  it('keeps to the model schema subset and meets the recommendation schema invariants', () => {
    expect([...keywords(registry.jsonSchema)].filter((k) => !MODEL_SUBSET.has(k))).toEqual([]);
    expect(checkRecommendationSchemaInvariants(registry.jsonSchema)).toEqual([]);
    expect(validate.llmSchema(registry).ok).toBe(true);
  });

  it('names what a broken recommendation schema lacks', () => {
    const root = registry.jsonSchema;
    const properties = asNode(root['properties']) ?? {};
    expect(
      checkRecommendationSchemaInvariants({
        ...root,
        required: ['action'],
        properties: { ...properties, action: { type: 'string', enum: ['BUY', 'SELL'] } },
      }),
    ).toEqual([
      "jsonSchema.required must include 'signal_strength'",
      "jsonSchema.required must include 'headline'",
      "jsonSchema.required must include 'horizon'",
      "jsonSchema.required must include 'rationale'",
      "jsonSchema.required must include 'risks'",
      'jsonSchema.properties.action must be a string enum of BUY|SELL|HOLD|REDUCE',
    ]);
    expect(checkRecommendationSchemaInvariants('no')).toEqual(['jsonSchema must be an object']);
  });
});
