import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Where `npm run console:build` (vite) writes the console, relative to the repository. */
export const CONSOLE_OUT_DIR = 'dist/console';

/** The newest modification time of `path` or the files under it, 0 when it does not exist. */
function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  if (statSync(path).isFile()) return statSync(path).mtimeMs;
  const dir = path;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** The console's directory, or why there is none. */
export type ConsoleBuild = { dir: string } | { dir?: undefined; reason: string };

/**
 * The built console for the orchestrator to serve (TDA_CONSOLE_DIR): built with vite when
 * missing or older than its sources, so `npm start` always serves the console of this checkout.
 * Returns the directory, or undefined (with the reason) when the sources are absent or the build
 * failed — the API then runs without a console.
 */
export function ensureConsoleBuilt(repoRoot: string, say: (line: string) => void): ConsoleBuild {
  const out = join(repoRoot, CONSOLE_OUT_DIR);
  const sources = join(repoRoot, 'services', 'console');
  if (!existsSync(join(sources, 'index.html'))) return { reason: 'no console/ sources' };
  const built = existsSync(join(out, 'index.html')) ? statSync(join(out, 'index.html')).mtimeMs : 0;
  // What the bundle is made of: the sources, the page, the static files and the vite config.
  const inputs = ['src', 'public', 'index.html', 'vite.config.ts'].map((p) => join(sources, p));
  const stale = built === 0 || Math.max(...inputs.map(newestMtime)) > built;
  if (!stale) return { dir: out };
  say('building the console (vite; once per change of console/)...');
  const vite = join(repoRoot, 'node_modules', '.bin', 'vite');
  const run = spawnSync(
    vite,
    ['build', '--config', join(sources, 'vite.config.ts'), '--logLevel', 'warn'],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    },
  );
  if (run.status !== 0) {
    return {
      reason: `console build failed: ${(run.stderr || String(run.error ?? '')).trim().slice(0, 300)}`,
    };
  }
  return { dir: out };
}
