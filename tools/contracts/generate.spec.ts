import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

interface GeneratorModule {
  // typed by generate-lib.d.mts
  ROOT: string;
  generate(): Promise<Record<string, string>>;
}

describe('generated contract code', () => {
  it('is up to date with contracts/*.schema.json (run `npm run contracts:generate`)', async () => {
    const generator = (await import('./generate-lib.mjs')) as GeneratorModule;
    const files = await generator.generate();
    expect(Object.keys(files).length).toBeGreaterThanOrEqual(3);
    for (const [path, content] of Object.entries(files)) {
      const committed = readFileSync(join(generator.ROOT, path), 'utf8');
      expect(committed, `${path} is stale: run npm run contracts:generate`).toBe(content);
    }
  });
});
