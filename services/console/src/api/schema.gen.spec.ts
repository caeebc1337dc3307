import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
// The document module alone (not the orchestrator's index, which boots half of Nest): the same
// function GET /openapi.json answers with.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildOpenApiDocument } from '../../../orchestrator/src/http/openapi.document';

/**
 * The console's API types are GENERATED from the orchestrator's OpenAPI document (the one served
 * at /openapi.json), never written by hand. This spec regenerates them in memory and fails when
 * the committed schema.gen.ts differs; `TDA_WRITE_API_TYPES=1` rewrites the file instead:
 *
 *   TDA_WRITE_API_TYPES=1 npx vitest run --project unit services/console/src/api/schema.gen.spec.ts
 */
const TARGET = resolve(__dirname, 'schema.gen.ts');
const WRITE = process.env['TDA_WRITE_API_TYPES'] === '1';

const HEADER = `/*
 * GENERATED from the orchestrator's OpenAPI document (buildOpenApiDocument) by openapi-typescript.
 * Do not edit. Regenerate: TDA_WRITE_API_TYPES=1 npx vitest run --project unit services/console/src/api/schema.gen.spec.ts
 */
`;

async function generate(): Promise<string> {
  // emptyObjectsUnknown: an object schema without properties (e.g. FlowRun.scope) is
  // Record<string, unknown>, not Record<string, never>.
  const ast = await openapiTS(buildOpenApiDocument() as never, { emptyObjectsUnknown: true });
  const config = (await resolveConfig(TARGET)) ?? {};
  return format(HEADER + astToString(ast), { ...config, filepath: TARGET });
}

describe('console API types (schema.gen.ts)', () => {
  it('match the OpenAPI document the orchestrator serves', async () => {
    const expected = await generate();
    if (WRITE) writeFileSync(TARGET, expected);
    const actual = readFileSync(TARGET, 'utf8');
    expect(
      actual === expected,
      'services/console/src/api/schema.gen.ts is stale: TDA_WRITE_API_TYPES=1 npx vitest run --project unit services/console/src/api/schema.gen.spec.ts',
    ).toBe(true);
  });
});
