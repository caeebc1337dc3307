import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

/**
 * Lints in-memory sources as if they lived at `filePath`, with the workspace ESLint config, so the
 * architecture rules are proven to fire without committing a file that breaks them.
 */
async function boundaryErrors(filePath: string, source: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    // Type information is irrelevant to import boundaries and virtual files have no program.
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
    ruleFilter: ({ ruleId }) => ruleId === '@nx/enforce-module-boundaries',
  });
  const [result] = await eslint.lintText(source, { filePath: resolve(root, filePath) });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === '@nx/enforce-module-boundaries')
    .map((m) => m.message);
}

describe('module boundaries (DESIGN.md §1)', () => {
  beforeAll(() => {
    // The rule reads NX's cached project graph and silently skips itself when there is none
    // (a fresh clone): compute it first, exactly as `npm run lint` does.
    const run = spawnSync(resolve(root, 'node_modules/.bin/nx'), ['show', 'projects'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
  });

  it('forbids the pure flow-engine from importing an adapter', async () => {
    const errors = await boundaryErrors(
      'libs/flow-engine/src/boundary-fixture.ts',
      "import { InMemoryBroker } from '@tda/messaging';\nexport const x = InMemoryBroker;\n",
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/tagged with "type:core" can only depend on libs tagged with/);
  });

  it('forbids contracts from importing the engine', async () => {
    const errors = await boundaryErrors(
      'libs/contracts/src/boundary-fixture.ts',
      "import { advance } from '@tda/flow-engine';\nexport const x = advance;\n",
    );
    expect(errors).toHaveLength(1);
  });

  it('forbids production code from importing test helpers', async () => {
    const errors = await boundaryErrors(
      'libs/flow-store/src/boundary-fixture.ts',
      "import { expectEventually } from '@tda/test-support';\nexport const x = expectEventually;\n",
    );
    expect(errors).toHaveLength(1);
  });

  it('forbids a service from importing another service', async () => {
    const eslint = new ESLint({
      cwd: root,
      overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
      ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
    });
    const [result] = await eslint.lintText(
      "import { createOrchestratorApp } from '@tda/service-orchestrator';\nexport const x = createOrchestratorApp;\n",
      { filePath: resolve(root, 'services/worker-chart-export/src/boundary-fixture.ts') },
    );
    expect(result?.messages.map((m) => m.message)).toEqual([
      expect.stringMatching(/services never import other services/),
    ]);
  });

  it('lets services use the service-runtime library, checked like any library', async () => {
    const eslint = new ESLint({
      cwd: root,
      overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
      ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
    });
    const [result] = await eslint.lintText(
      "import { runServiceMain } from '@tda/service-runtime';\nexport const x = runServiceMain;\n",
      { filePath: resolve(root, 'services/worker-chart-export/src/boundary-fixture.ts') },
    );
    expect(result?.messages).toEqual([]);
    const errors = await boundaryErrors(
      'libs/flow-engine/src/boundary-fixture.ts',
      "import { runServiceMain } from '@tda/service-runtime';\nexport const x = runServiceMain;\n",
    );
    expect(errors).toHaveLength(1);
  });

  it('allows an adapter to import the engine and contracts', async () => {
    const errors = await boundaryErrors(
      'libs/flow-store/src/boundary-fixture.ts',
      "import { advance } from '@tda/flow-engine';\nimport { validate } from '@tda/contracts';\nexport const x = [advance, validate];\n",
    );
    expect(errors).toEqual([]);
  });

  it('makes every production error class extend TdaError', async () => {
    const eslint = new ESLint({
      cwd: root,
      overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
      ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax',
    });
    const lint = async (filePath: string, source: string) => {
      const [result] = await eslint.lintText(source, { filePath: resolve(root, filePath) });
      return result?.messages.map((m) => m.message) ?? [];
    };
    const plain = 'export class OopsError extends Error {}\n';
    expect(await lint('services/cli/src/error-fixture.ts', plain)).toEqual([
      expect.stringMatching(/errors extend TdaError/),
    ]);
    expect(await lint('libs/flow-engine/src/error-fixture.ts', plain)).toHaveLength(1);
    const coded =
      "import { TdaError } from '@tda/contracts';\nexport class OopsError extends TdaError {}\n";
    expect(await lint('libs/flow-engine/src/error-fixture.ts', coded)).toEqual([]);
    expect(await lint('libs/flow-engine/src/error-fixture.spec.ts', plain)).toEqual([]);
  });
});
