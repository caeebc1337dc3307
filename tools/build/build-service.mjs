#!/usr/bin/env node
// Production bundle of deployable services: `node tools/build/build-service.mjs <project>...`
// (`--all`: every project tagged type:service; `--out-root <dir>`: instead of dist/services;
// `--json`: the results as one JSON array on stdout, for the tests).
// Writes <out-root>/<project>/{main.js, main.js.map, package.json, package-lock.json, assets}
// and prints one summary line per project. `npx nx run <project>:build` runs this.
import { resolve } from 'node:path';
import { buildService, DEFAULT_OUT_ROOT, loadWorkspace } from './build-lib.mjs';

const args = process.argv.slice(2);
let outRoot = DEFAULT_OUT_ROOT;
const projects = [];
let all = false;
let json = false;
for (let i = 0; i < args.length; i += 1) {
  const arg = args[i];
  if (arg === '--out-root') outRoot = resolve(args[++i] ?? '');
  else if (arg.startsWith('--out-root=')) outRoot = resolve(arg.slice('--out-root='.length));
  else if (arg === '--all') all = true;
  else if (arg === '--json') json = true;
  else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
  else projects.push(arg);
}

const workspace = await loadWorkspace();
const targets = all ? workspace.services : projects;
if (targets.length === 0) {
  console.error('usage: build-service.mjs (--all | <project>...) [--out-root <dir>]');
  process.exit(2);
}
for (const project of targets) {
  if (!workspace.services.includes(project)) {
    console.error(
      `${project} is not a deployable service (tag type:service): ${workspace.services.join(', ')}`,
    );
    process.exit(2);
  }
}
const results = await Promise.allSettled(
  targets.map((p) => buildService(workspace, p, { outRoot })),
);
let failed = false;
if (json) {
  const values = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  process.stdout.write(`${JSON.stringify(values)}\n`);
}
for (const [index, result] of results.entries()) {
  if (result.status === 'rejected') {
    failed = true;
    console.error(
      `${targets[index]}: build FAILED: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`,
    );
    continue;
  }
  const r = result.value;
  (json ? console.error : console.log)(
    `${r.project}: ${r.outDir} main.js ${(r.bundleBytes / 1024).toFixed(0)} KiB (map ${(r.mapBytes / 1024).toFixed(0)} KiB), bundled in ${r.bundleMs} ms, total ${r.ms} ms; ${r.dependencies.length} dependencies: ${r.dependencies.join(' ')}${r.assets.length > 0 ? `; assets: ${r.assets.join(' ')}` : ''}${r.declaredOnly.length > 0 ? `; declared but not imported by the bundle: ${r.declaredOnly.join(' ')}` : ''}`,
  );
}
process.exit(failed ? 1 : 0);
