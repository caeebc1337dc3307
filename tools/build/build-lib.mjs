// Production bundles of the deployable services (issue 6). See build-service.mjs for the CLI and
// tools/build/README.md for the layout of dist/services/<project>.
//
// One bundle = esbuild (bundling, CJS output for Node 24) + SWC for every workspace .ts file
// (esbuild cannot emit the decorator metadata NestJS DI reads from constructor parameter types).
// Workspace code (@tda/* through the tsconfig paths) is bundled; every npm package stays external
// and is installed in the image from a package.json + package-lock.json that NX prunes from the
// root ones for exactly this project.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DEFAULT_OUT_ROOT = join(ROOT, 'dist', 'services');
/** The tag of the deployable services (cli and local-stack are not deployed). */
const SERVICE_TAG = 'type:service';

/**
 * Data files the bundled code reads at run time, copied next to main.js when the bundle contains
 * the module that reads them. `to` is the directory name that module looks for beside the bundle
 * (libs/market-data/src/data-dir.ts: BUNDLE_DATA_DIR_NAME).
 */
const BUNDLE_ASSETS = [
  {
    whenBundled: 'libs/market-data/src/data-dir.ts',
    from: 'libs/market-data/data',
    to: 'market-data',
  },
  {
    // The web console the orchestrator serves (TDA_CONSOLE_DIR=console in its deployment):
    // built by vite straight into the bundle, so an image serves the console of its commit.
    whenBundled: 'services/orchestrator/src/console/console-static.ts',
    build: ['build', '--config', 'services/console/vite.config.ts', '--logLevel', 'warn'],
    to: 'console',
  },
];

const BUILTINS = new Set(builtinModules.filter((m) => !m.startsWith('_')));

/**
 * The npm package an import specifier names ('@scope/pkg/sub' -> '@scope/pkg', 'pkg/x' -> 'pkg'),
 * or undefined for Node builtins ('fs', 'node:fs', 'fs/promises') and relative/absolute paths.
 */
export function packageNameOf(specifier) {
  if (specifier.startsWith('node:')) return undefined;
  if (specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
  if (BUILTINS.has(name) || BUILTINS.has(specifier)) return undefined;
  return name;
}

/** Every npm package the bundle loads at run time (static, require and dynamic imports). */
export function externalPackages(metafile) {
  const names = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const entry of output.imports ?? []) {
      if (!entry.external) continue;
      const name = packageNameOf(entry.path);
      if (name !== undefined) names.add(name);
    }
  }
  return [...names].sort();
}

/** Packages the bundle imports that the pruned manifest does not install: each is a crash. */
export function undeclaredPackages(externals, manifest) {
  const declared = manifest.dependencies ?? {};
  return externals.filter((name) => !Object.hasOwn(declared, name));
}

/**
 * Adds the packages a project loads without a static import (declared in its build target as
 * `runtimeDependencies`) with the root package.json's version. A runtime dependency must be a
 * production dependency of the root: a devDependency would not be installed in the image.
 */
export function withRuntimeDependencies(manifest, runtimeDependencies, rootPackageJson) {
  const dependencies = { ...manifest.dependencies };
  for (const name of runtimeDependencies) {
    const version = rootPackageJson.dependencies?.[name];
    if (version === undefined) {
      throw new Error(
        `runtime dependency ${name} is not in the root package.json "dependencies" (a devDependency or a typo?)`,
      );
    }
    dependencies[name] = version;
  }
  const sorted = Object.fromEntries(
    Object.entries(dependencies).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return { ...manifest, dependencies: sorted };
}

/**
 * The lockfile NX pruned must describe exactly this manifest: NX falls back to the whole root
 * lockfile on a pruning error, which would make `npm ci` fail in the image (or install the dev
 * tooling). Returns the problems; empty when the lockfile is the pruned one.
 */
export function lockfileProblems(lockfile, manifest) {
  const problems = [];
  const root = lockfile.packages?.[''] ?? {};
  const want = JSON.stringify(manifest.dependencies ?? {});
  const got = JSON.stringify(root.dependencies ?? {});
  if (want !== got) problems.push(`lockfile root dependencies ${got} != manifest ${want}`);
  if (root.devDependencies && Object.keys(root.devDependencies).length > 0) {
    problems.push('lockfile root has devDependencies');
  }
  if (root.workspaces) problems.push('lockfile root has workspaces (the unpruned root lockfile?)');
  for (const [path, entry] of Object.entries(lockfile.packages ?? {})) {
    if (path !== '' && entry.dev === true) problems.push(`lockfile installs dev package ${path}`);
  }
  return problems;
}

/** The root allowScripts policy, narrowed to the packages the pruned lockfile installs. */
export function prunedAllowScripts(allowScripts, lockfile) {
  if (!allowScripts) return undefined;
  const installed = new Set(
    Object.keys(lockfile.packages ?? {})
      .filter((path) => path.includes('node_modules/'))
      .map((path) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
  );
  const kept = Object.entries(allowScripts).filter(([name]) => installed.has(name));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/**
 * The images install with `npm ci --ignore-scripts`: every package of the pruned lockfile that
 * has an install script must be denied (false) by the root allowScripts policy, so that skipping
 * the scripts changes nothing. Returns the packages that would need their script.
 */
export function installScriptProblems(lockfile, allowScripts = {}) {
  return Object.entries(lockfile.packages ?? {})
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    .filter((name) => allowScripts[name] !== false)
    .sort();
}

/** Expands nx.json named inputs into file patterns ('default' -> '{projectRoot}/**', ...). */
export function expandFilePatterns(inputs, namedInputs, seen = new Set()) {
  const patterns = [];
  for (const input of inputs) {
    if (typeof input !== 'string') continue; // {externalDependencies}, {runtime}: not files
    const name = input.startsWith('^') ? undefined : input;
    if (name !== undefined && namedInputs[name] !== undefined) {
      if (seen.has(name)) continue;
      patterns.push(
        ...expandFilePatterns(namedInputs[name], namedInputs, new Set([...seen, name])),
      );
    } else if (input.includes('{projectRoot}')) {
      patterns.push(input);
    }
  }
  return patterns;
}

/**
 * esbuild plugin: every workspace .ts file goes through SWC (legacy decorators + decorator
 * metadata, ES module syntax kept so esbuild still sees the import graph and bundles it). The
 * inline source map SWC emits is picked up by esbuild, so main.js.map points at the .ts lines.
 */
function swcPlugin(swc) {
  return {
    name: 'tda-swc',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = await readFile(args.path, 'utf8');
        const output = await swc.transform(source, {
          filename: args.path,
          swcrc: false,
          configFile: false,
          sourceMaps: 'inline',
          jsc: {
            parser: { syntax: 'typescript', decorators: true },
            transform: { legacyDecorator: true, decoratorMetadata: true },
            target: 'es2023',
            keepClassNames: true,
          },
          // no `module`: SWC keeps import/export, esbuild links and converts to CJS
        });
        return { contents: output.code, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/** Removes the test-only files from NX's file map (nx.json `production`), for every project. */
function productionFileMap(fileMap, graph, patterns, filterUsingGlobPatterns) {
  return Object.fromEntries(
    Object.entries(fileMap).map(([project, files]) => {
      const node = graph.nodes[project];
      return [project, node ? filterUsingGlobPatterns(node.data.root, files, patterns) : files];
    }),
  );
}

async function loadNx() {
  const devkit = await import('@nx/devkit');
  const internal = await import('@nx/devkit/internal');
  const js = await import('@nx/js');
  return { devkit, internal, js };
}

/**
 * What every bundle of one build run needs, read once: NX's project graph and production file
 * map, the root package.json and the deployable services (tag type:service).
 */
export async function loadWorkspace() {
  const nx = await loadNx();
  const graph = await nx.devkit.createProjectGraphAsync({ exitOnError: false });
  // The per-file import data NX computed with this graph (what createPackageJson reads by default).
  const fileMap = nx.internal.readFileMapCache()?.fileMap?.projectFileMap;
  if (!fileMap) throw new Error('NX wrote no file map cache (.nx/workspace-data)');
  const nxJson = JSON.parse(readFileSync(join(ROOT, 'nx.json'), 'utf8'));
  const production = nxJson.namedInputs?.production;
  if (!Array.isArray(production)) throw new Error('nx.json has no `production` named input');
  const patterns = expandFilePatterns(production, nxJson.namedInputs);
  return {
    nx,
    graph,
    rootPackageJson: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')),
    fileMap: productionFileMap(fileMap, graph, patterns, nx.internal.filterUsingGlobPatterns),
    services: Object.values(graph.nodes)
      .filter((node) => node.data.tags?.includes(SERVICE_TAG))
      .map((node) => node.name)
      .sort(),
  };
}

/** The pruned production manifest + lockfile of one project, from NX's project graph. */
function prunedManifest(workspace, project) {
  const { nx, graph, fileMap, rootPackageJson } = workspace;
  const node = graph.nodes[project];
  const runtimeDependencies = node.data.targets?.build?.options?.runtimeDependencies ?? [];
  const fromNx = nx.js.createPackageJson(
    project,
    graph,
    { target: 'build', isProduction: true, root: ROOT, skipOverrides: true },
    fileMap,
  );
  let manifest = withRuntimeDependencies(fromNx, runtimeDependencies, rootPackageJson);
  manifest = {
    name: `tda-${project}`,
    version: rootPackageJson.version,
    private: true,
    license: rootPackageJson.license,
    engines: rootPackageJson.engines,
    main: 'main.js',
    scripts: { start: 'node main.js' },
    dependencies: manifest.dependencies,
  };
  let lockText;
  nx.js.generatePrunedDeployOutput(manifest, graph, node.data.root, {
    packageManager: 'npm',
    workspaceRoot: ROOT,
    emit: (path, content) => {
      if (path === 'package-lock.json') lockText = content.toString();
    },
  });
  if (lockText === undefined) throw new Error(`${project}: NX emitted no package-lock.json`);
  const lockfile = JSON.parse(lockText);
  const problems = lockfileProblems(lockfile, manifest);
  if (problems.length > 0) throw new Error(`${project}: pruned lockfile: ${problems.join('; ')}`);
  const needScripts = installScriptProblems(lockfile, rootPackageJson.allowScripts);
  if (needScripts.length > 0) {
    throw new Error(
      `${project}: ${needScripts.join(', ')} ${needScripts.length === 1 ? 'has an install script' : 'have install scripts'} not denied by the root allowScripts, but the image installs with --ignore-scripts`,
    );
  }
  const allowScripts = prunedAllowScripts(rootPackageJson.allowScripts, lockfile);
  if (allowScripts) manifest = { ...manifest, allowScripts };
  return { manifest, lockText, runtimeDependencies };
}

/** Bundles one service into `outDir` and writes its pruned manifest; fails on a missing dep. */
export async function buildService(workspace, project, { outRoot = DEFAULT_OUT_ROOT } = {}) {
  const started = Date.now();
  const node = workspace.graph.nodes[project];
  if (!node) throw new Error(`unknown NX project ${project}`);
  const entry = join(ROOT, node.data.sourceRoot ?? join(node.data.root, 'src'), 'main.ts');
  const outDir = join(outRoot, project);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  const esbuild = await import('esbuild');
  const swc = await import('@swc/core');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    outfile: join(outDir, 'main.js'),
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    sourcemap: true,
    sourcesContent: false,
    // Nest and the logs use class names; bundling may rename colliding top-level classes.
    keepNames: true,
    packages: 'external',
    tsconfig: join(ROOT, 'tsconfig.base.json'),
    metafile: true,
    logLevel: 'silent',
    // The CJS bundle has no import.meta: chart-font.ts resolves the font package with
    // createRequire(import.meta.url), which becomes the bundle's own file URL.
    define: { 'import.meta.url': '__tda_import_meta_url' },
    banner: {
      js: 'const __tda_import_meta_url = require("node:url").pathToFileURL(__filename).href;',
    },
    plugins: [swcPlugin(swc)],
  });
  const bundleMs = Date.now() - started;
  if (result.warnings.length > 0) {
    const text = await esbuild.formatMessages(result.warnings, { kind: 'warning' });
    throw new Error(`${project}: esbuild warnings (treated as errors):\n${text.join('\n')}`);
  }

  const { manifest, lockText, runtimeDependencies } = prunedManifest(workspace, project);
  const externals = externalPackages(result.metafile);
  const missing = undeclaredPackages(externals, manifest);
  if (missing.length > 0) {
    throw new Error(
      `${project}: the bundle imports ${missing.join(', ')} but the pruned package.json does not declare ${missing.length === 1 ? 'it' : 'them'} (add to the root dependencies, or to the build target's runtimeDependencies)`,
    );
  }
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(outDir, 'package-lock.json'), lockText);

  const bundledInputs = new Set(
    Object.entries(result.metafile.outputs[relative(ROOT, join(outDir, 'main.js'))]?.inputs ?? {})
      .filter(([, info]) => info.bytesInOutput > 0)
      .map(([path]) => path.split(sep).join('/')),
  );
  const assets = [];
  for (const asset of BUNDLE_ASSETS) {
    if (!bundledInputs.has(asset.whenBundled)) continue;
    if (asset.build === undefined) {
      cpSync(join(ROOT, asset.from), join(outDir, asset.to), { recursive: true });
    } else {
      const vite = join(ROOT, 'node_modules', '.bin', 'vite');
      const args = [...asset.build, '--outDir', join(outDir, asset.to), '--emptyOutDir'];
      const built = spawnSync(vite, args, { cwd: ROOT, encoding: 'utf8' });
      if (built.status !== 0) {
        throw new Error(`${project}: building ${asset.to} failed: ${built.stderr || built.error}`);
      }
    }
    assets.push(asset.to);
  }

  const declaredOnly = Object.keys(manifest.dependencies).filter(
    (name) => !externals.includes(name) && !runtimeDependencies.includes(name),
  );
  return {
    project,
    outDir,
    ms: Date.now() - started,
    bundleMs,
    bundleBytes: statSync(join(outDir, 'main.js')).size,
    mapBytes: statSync(join(outDir, 'main.js.map')).size,
    dependencies: Object.keys(manifest.dependencies),
    externals,
    // in the manifest (NX saw an import) but not in the bundle (tree-shaken or type-only)
    declaredOnly,
    assets,
  };
}
