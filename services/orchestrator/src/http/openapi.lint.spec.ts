import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from './openapi.document';

/**
 * The API description passes Redocly's `recommended` rule set (a maintained OpenAPI linter):
 * servers, a summary per operation, defined required properties, valid examples.
 */
describe('OpenAPI document lint (Redocly recommended)', () => {
  it('has no errors and no warnings', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(buildOpenApiDocument()),
      absoluteRef: 'openapi.json',
      config,
    });
    const found = problems.map(
      (p) => `${p.severity} ${p.ruleId}: ${p.message} @ ${p.location[0]?.pointer ?? ''}`,
    );
    expect(found).toEqual([]);
  });
});
