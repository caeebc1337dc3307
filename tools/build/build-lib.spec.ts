import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveBundledDataDir } from '../../libs/market-data/src/data-dir';

// typed by build-lib.d.mts
type BuildLib = typeof import('./build-lib.mjs');
let lib: BuildLib;

beforeAll(async () => {
  lib = (await import('./build-lib.mjs')) as BuildLib;
});

describe('packageNameOf', () => {
  it('names the package of bare and scoped specifiers, deep imports included', () => {
    expect(lib.packageNameOf('zod')).toBe('zod');
    expect(lib.packageNameOf('rxjs/operators')).toBe('rxjs');
    expect(lib.packageNameOf('@nestjs/common')).toBe('@nestjs/common');
    expect(lib.packageNameOf('@google-cloud/pubsub/build/src/x')).toBe('@google-cloud/pubsub');
  });

  it('ignores Node builtins (with and without node:) and paths', () => {
    for (const specifier of ['node:fs', 'fs', 'fs/promises', 'node:test', 'path', 'worker_threads'])
      expect(lib.packageNameOf(specifier)).toBeUndefined();
    expect(lib.packageNameOf('./local')).toBeUndefined();
    expect(lib.packageNameOf('/abs/file.js')).toBeUndefined();
  });
});

describe('the externals-vs-manifest safety net', () => {
  const metafile = {
    outputs: {
      'dist/services/x/main.js': {
        imports: [
          { path: '@nestjs/core', kind: 'require-call', external: true },
          { path: 'node:fs', kind: 'require-call', external: true },
          { path: 'ccxt', kind: 'dynamic-import', external: true },
          { path: 'rxjs/operators', kind: 'require-call', external: true },
          { path: 'libs/config/src/index.ts', kind: 'import-statement' },
        ],
      },
      'dist/services/x/main.js.map': { imports: [] },
    },
  };

  it('lists every npm package the bundle loads (dynamic imports too), builtins excluded', () => {
    expect(lib.externalPackages(metafile)).toEqual(['@nestjs/core', 'ccxt', 'rxjs']);
  });

  it('reports the imports the pruned manifest does not install', () => {
    const externals = lib.externalPackages(metafile);
    expect(
      lib.undeclaredPackages(externals, { dependencies: { '@nestjs/core': '11', rxjs: '7' } }),
    ).toEqual(['ccxt']);
    expect(lib.undeclaredPackages(externals, {})).toEqual(['@nestjs/core', 'ccxt', 'rxjs']);
    expect(
      lib.undeclaredPackages(externals, {
        dependencies: { '@nestjs/core': '11', ccxt: '4', rxjs: '7', extra: '1' },
      }),
    ).toEqual([]);
  });
});

describe('withRuntimeDependencies', () => {
  const root = {
    dependencies: { 'dejavu-fonts-ttf': '2.37.3', zod: '4.6.7' },
    devDependencies: { vitest: '4.1.12' },
  };

  it('adds the declared runtime packages with the root version, sorted', () => {
    const merged = lib.withRuntimeDependencies(
      { name: 'x', dependencies: { zod: '4.6.7' } },
      ['dejavu-fonts-ttf'],
      root,
    );
    expect(Object.entries(merged.dependencies)).toEqual([
      ['dejavu-fonts-ttf', '2.37.3'],
      ['zod', '4.6.7'],
    ]);
    expect(merged.name).toBe('x');
  });

  it('refuses a runtime package that is not a root production dependency', () => {
    expect(() => lib.withRuntimeDependencies({}, ['vitest'], root)).toThrow(/vitest/);
    expect(() => lib.withRuntimeDependencies({}, ['no-such-pkg'], root)).toThrow(/no-such-pkg/);
  });
});

describe('lockfileProblems', () => {
  const manifest = { dependencies: { a: '1.0.0', b: '2.0.0' } };

  it('accepts a lockfile pruned to exactly the manifest', () => {
    const lock = {
      packages: {
        '': { dependencies: { a: '1.0.0', b: '2.0.0' } },
        'node_modules/a': {},
        'node_modules/b': {},
      },
    };
    expect(lib.lockfileProblems(lock, manifest)).toEqual([]);
  });

  it('rejects the unpruned root lockfile NX falls back to on a pruning error', () => {
    const lock = {
      packages: {
        '': {
          dependencies: { a: '1.0.0', b: '2.0.0', c: '3.0.0' },
          devDependencies: { vitest: '4' },
          workspaces: ['services/cli'],
        },
        'node_modules/vitest': { dev: true },
      },
    };
    const problems = lib.lockfileProblems(lock, manifest);
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/node_modules\/vitest/);
  });
});

describe('prunedAllowScripts', () => {
  it('keeps the policy entries of installed packages only', () => {
    const lock = {
      packages: { '': {}, 'node_modules/protobufjs': {}, 'node_modules/x/node_modules/ccxt': {} },
    };
    expect(lib.prunedAllowScripts({ protobufjs: false, ccxt: false, esbuild: true }, lock)).toEqual(
      { protobufjs: false, ccxt: false },
    );
    expect(lib.prunedAllowScripts({ esbuild: true }, lock)).toBeUndefined();
    expect(lib.prunedAllowScripts(undefined, lock)).toBeUndefined();
  });
});

describe('installScriptProblems', () => {
  it('lists the installed packages with an install script the root policy does not deny', () => {
    const lock = {
      packages: {
        '': {},
        'node_modules/protobufjs': { hasInstallScript: true },
        'node_modules/a/node_modules/bufferutil': { hasInstallScript: true },
        'node_modules/sharp': { hasInstallScript: true },
        'node_modules/zod': {},
      },
    };
    expect(
      lib.installScriptProblems(lock, { protobufjs: false, bufferutil: false, sharp: false }),
    ).toEqual([]);
    expect(lib.installScriptProblems(lock, { protobufjs: false, sharp: true })).toEqual([
      'bufferutil',
      'sharp',
    ]);
  });
});

describe('expandFilePatterns', () => {
  it('expands named inputs into the project file patterns, dropping non-file inputs', () => {
    const named = {
      default: ['{projectRoot}/**/*', 'sharedGlobals'],
      sharedGlobals: ['{workspaceRoot}/tsconfig.base.json'],
      production: ['default', '!{projectRoot}/**/*.spec.ts', { externalDependencies: ['x'] }],
    };
    expect(lib.expandFilePatterns(['production'], named)).toEqual([
      '{projectRoot}/**/*',
      '!{projectRoot}/**/*.spec.ts',
    ]);
  });
});

describe('resolveBundledDataDir (libs/market-data, where the build copies the CSVs)', () => {
  it('prefers the market-data directory beside a bundle, else the sources layout', () => {
    const bundleDir = mkdtempSync(join(tmpdir(), 'tda-bundle-dir-'));
    expect(resolveBundledDataDir(bundleDir)).toBe(join(bundleDir, '..', 'data'));
    mkdirSync(join(bundleDir, 'market-data'));
    expect(resolveBundledDataDir(bundleDir)).toBe(join(bundleDir, 'market-data'));
  });
});
