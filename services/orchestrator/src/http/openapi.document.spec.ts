import { readSchema } from '@tda/contracts/testing';
import { STEP_TYPE_DESCRIPTORS } from '@tda/step-types';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeAccessTable } from '../auth/route-access';
import { ORCHESTRATOR_CONTROLLERS } from '../orchestrator.module';
import { buildOpenApiDocument, OPENAPI_SCHEMAS } from './openapi.document';

const DOC_KEYS = new Set(['$schema', '$id', 'title', 'description', 'examples', '$comment']);

/** A contract schema with its cross-file $refs inlined and documentation keys dropped. */
function inlined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inlined);
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const match = /^([a-z_]+)\.schema\.json#\/\$defs\/(\w+)$/.exec(ref);
    if (match === null) throw new Error(`unsupported $ref ${ref}`);
    const defs = readSchema(match[1] ?? '')['$defs'] as Record<string, unknown>;
    return inlined(defs[match[2] ?? '']);
  }
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !DOC_KEYS.has(key))
      .map(([key, v]) => [key, inlined(v)]),
  );
}

describe('OpenAPI document', () => {
  it.each([
    ['TriggerRequest', 'trigger_request'],
    ['ApiError', 'api_error'],
  ])('%s is the contract schema %s', (component, contract) => {
    expect(OPENAPI_SCHEMAS[component]).toEqual(inlined(readSchema(contract)));
  });

  it.each([
    ['ReportIndexEntry', 'report_index'],
    ['RecommendationIndexEntry', 'recommendation_index'],
    ['RunStatusSummary', 'run_status_summary'],
    ['ApiToken', 'api_token'],
    ['ApiTokenRequest', 'api_token_request'],
    ['UserIdentity', 'user_identity'],
    ['UserIdentityRequest', 'user_identity_request'],
  ])('%s names the contract required fields and exactly its properties', (component, contract) => {
    const schema = readSchema(contract) as { required: string[]; properties: object };
    const abridged = OPENAPI_SCHEMAS[component] as { required: string[]; properties: object };
    expect(abridged.required).toEqual(schema.required);
    expect(Object.keys(abridged.properties).sort()).toEqual(Object.keys(schema.properties).sort());
  });

  it('FlowRun names the contract required fields and only contract properties', () => {
    const contract = readSchema('flow_run') as { required: string[]; properties: object };
    const component = OPENAPI_SCHEMAS['FlowRun'] as { required: string[]; properties: object };
    expect(component.required).toEqual(contract.required);
    for (const key of Object.keys(component.properties)) {
      expect(Object.keys(contract.properties)).toContain(key);
    }
  });

  it('documents every route (each method) and only references defined schemas', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
    // Every route of the app is an operation of the document, and nothing else is.
    const routes = routeAccessTable(ORCHESTRATOR_CONTROLLERS)
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
      .sort();
    const operations = Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
      .sort();
    expect(operations).toEqual(routes);
    const refs = [...JSON.stringify(doc).matchAll(/"#\/components\/schemas\/(\w+)"/g)].map(
      (m) => m[1],
    );
    expect(refs.length).toBeGreaterThan(5);
    for (const name of refs) expect(Object.keys(OPENAPI_SCHEMAS)).toContain(name);
  });

  it('documents the inputs and artifact contract of every described step type', () => {
    const root = resolve(__dirname, '../../../..');
    for (const [component, contractOf] of [
      ['StepInputs', (d: (typeof STEP_TYPE_DESCRIPTORS)[number]) => d.inputsContract],
      ['StepArtifact', (d: (typeof STEP_TYPE_DESCRIPTORS)[number]) => d.artifact.contract],
    ] as const) {
      const schema = OPENAPI_SCHEMAS[component] as {
        description: string;
        'x-tda-contracts': Record<string, string>;
      };
      expect(Object.keys(schema['x-tda-contracts'])).toEqual(
        STEP_TYPE_DESCRIPTORS.map((d) => d.stepType),
      );
      for (const descriptor of STEP_TYPE_DESCRIPTORS) {
        const file = `contracts/${contractOf(descriptor)}.schema.json`;
        expect(schema['x-tda-contracts'][descriptor.stepType]).toBe(file);
        expect(schema.description).toContain(`${file} (${descriptor.stepType})`);
        expect(existsSync(resolve(root, file)), file).toBe(true);
      }
    }
  });
});
