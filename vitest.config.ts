import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// Path aliases come from tsconfig.base.json so that the compiler, ESLint and the tests agree.
const base = JSON.parse(readFileSync(resolve(__dirname, 'tsconfig.base.json'), 'utf8')) as {
  compilerOptions: { paths: Record<string, string[]> };
};
const alias = Object.entries(base.compilerOptions.paths)
  // longest first so '@tda/flow-store/testing' wins over '@tda/flow-store'
  .sort(([a], [b]) => b.length - a.length)
  .map(([key, [target]]) => ({
    find: new RegExp(`^${key.replace(/[/-]/g, (c) => `\\${c}`)}$`),
    replacement: resolve(__dirname, target ?? ''),
  }));

// SWC compiles the TypeScript so that NestJS decorator metadata is emitted (esbuild cannot).
const plugins = [swc.vite({ module: { type: 'es6' } })];

export default defineConfig({
  plugins,
  resolve: { alias },
  test: {
    projects: [
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'unit',
          // unit first (fast feedback), then the emulator-backed project
          sequence: { groupOrder: 0 },
          // Property tests run hundreds of cases; on a loaded 2-core CI machine 5 s is too tight.
          // This is a hang guard, not a speed assertion (speed lives in bench/).
          testTimeout: 30_000,
          include: [
            'libs/**/*.spec.ts',
            'services/**/*.spec.ts',
            'tools/**/*.spec.ts',
            'bench/**/*.spec.ts',
          ],
          environment: 'node',
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          include: [
            'libs/**/*.int-spec.ts',
            'services/**/*.int-spec.ts',
            'tools/**/*.int-spec.ts',
            'bench/**/*.int-spec.ts',
          ],
          environment: 'node',
          globalSetup: ['tools/test/emulators.global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // The emulators are shared by every file; two cores do not gain from more forks.
          maxWorkers: 2,
        },
      },
    ],
  },
});
