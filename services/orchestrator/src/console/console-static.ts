import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ConfigError } from '@tda/config';
import { ORCHESTRATOR_SERVICE, type OrchestratorConfig } from '../config';

/*
 * The web console (console/, built into TDA_CONSOLE_DIR) served by the orchestrator itself, so it
 * shares the API's origin and auth. Static files need no auth: they hold no data, every data
 * route keeps its own. The same URL is a page or an API answer depending on who asks: a browser
 * navigation (Accept: text/html) to /runs/{runId} gets the console, which then fetches
 * /runs/{runId} with Accept: application/json and gets the run.
 */

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.webmanifest': 'application/manifest+json',
};

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.map', '.txt']);

/** Pages the API renders itself for browsers: a navigation to them never gets the console. */
const SERVER_PAGES = ['/docs', '/openapi.json', '/healthz', '/metrics'];

/**
 * Who may load what into the console's page. Scripts and styles come from this origin only (the
 * built bundle has no inline script); inline style attributes are React's and the graph's; chart
 * PNGs are blob: URLs; the API and its event streams are same-origin.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

export interface ConsoleFile {
  body: Buffer;
  gzip: Buffer | undefined;
  contentType: string;
  /** Content-hashed (Vite's assets/): cached for a year; everything else revalidates. */
  immutable: boolean;
}

/** The built console in memory: URL path → file. Read once at boot (a few MB). */
export interface ConsoleSite {
  files: ReadonlyMap<string, ConsoleFile>;
  index: ConsoleFile;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.name.startsWith('.')) return [];
    if (entry.isDirectory()) return listFiles(path);
    return entry.isFile() ? [path] : [];
  });
}

function fileOf(path: string, urlPath: string): ConsoleFile {
  const extension = extname(path).toLowerCase();
  const body = readFileSync(path);
  return {
    body,
    gzip: COMPRESSIBLE.has(extension) && body.length > 1024 ? gzipSync(body) : undefined,
    contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    immutable: urlPath.startsWith('/assets/'),
  };
}

/** Loads a built console; a directory without index.html is a configuration error at boot. */
export function loadConsoleSite(dir: string): ConsoleSite {
  const root = resolve(dir);
  if (!existsSync(join(root, 'index.html')) || !statSync(root).isDirectory()) {
    throw new ConfigError(ORCHESTRATOR_SERVICE, [
      `TDA_CONSOLE_DIR: ${root} has no index.html (build the console: npm run console:build)`,
    ]);
  }
  const files = new Map<string, ConsoleFile>();
  for (const path of listFiles(root)) {
    const urlPath = `/${relative(root, path).split(sep).join('/')}`;
    files.set(urlPath, fileOf(path, urlPath));
  }
  return { files, index: files.get('/index.html') ?? fileOf(join(root, 'index.html'), '/') };
}

export type ConsoleRoute =
  { kind: 'file'; file: ConsoleFile } | { kind: 'page' } | { kind: 'pass' };

/** A path ending in a static file's extension is a file request, never a page. */
function looksLikeFile(path: string): boolean {
  return extname(path).toLowerCase() in CONTENT_TYPES;
}

/**
 * What the console answers for a request, or `pass` to let the API handle it: its files, the
 * console page for `/` and for browser navigations to client routes (deep links such as
 * /runs/abc?step=x), nothing for API clients (Accept: application/json or *\/*).
 */
export function routeConsoleRequest(
  site: ConsoleSite,
  request: { method: string; path: string; accept: string | undefined },
): ConsoleRoute {
  if (request.method !== 'GET' && request.method !== 'HEAD') return { kind: 'pass' };
  const file = site.files.get(request.path);
  if (file !== undefined) return { kind: 'file', file };
  if (request.path === '/') return { kind: 'page' };
  const navigation = (request.accept ?? '').toLowerCase().includes('text/html');
  const serverPage = SERVER_PAGES.some(
    (p) => request.path === p || request.path.startsWith(`${p}/`),
  );
  if (navigation && !serverPage && !looksLikeFile(request.path)) return { kind: 'page' };
  return { kind: 'pass' };
}

function pathOf(url: string | undefined): string | undefined {
  try {
    return decodeURIComponent(new URL(url ?? '/', 'http://console.invalid').pathname);
  } catch {
    return undefined; // a malformed escape: the API answers it
  }
}

function send(
  request: IncomingMessage,
  response: ServerResponse,
  file: ConsoleFile,
  page: boolean,
): void {
  const gzip =
    file.gzip !== undefined && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  const body = gzip && file.gzip !== undefined ? file.gzip : file.body;
  response.statusCode = 200;
  response.setHeader('Content-Type', file.contentType);
  response.setHeader('Content-Length', String(body.length));
  response.setHeader(
    'Cache-Control',
    file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  );
  // The same URL is the console or the API's JSON depending on Accept.
  response.setHeader('Vary', file.gzip === undefined ? 'Accept' : 'Accept, Accept-Encoding');
  response.setHeader('X-Content-Type-Options', 'nosniff');
  if (gzip) response.setHeader('Content-Encoding', 'gzip');
  if (page || file.contentType.startsWith('text/html')) {
    response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    response.setHeader('Referrer-Policy', 'no-referrer');
  }
  response.end(request.method === 'HEAD' ? undefined : body);
}

type Middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => void;

/** Express middleware serving a loaded console; everything it does not answer goes on to Nest. */
export function consoleMiddleware(site: ConsoleSite): Middleware {
  return (request, response, next) => {
    const path = pathOf(request.url);
    if (path === undefined) return next();
    const route = routeConsoleRequest(site, {
      method: request.method ?? 'GET',
      path,
      accept: request.headers.accept,
    });
    if (route.kind === 'pass') return next();
    send(request, response, route.kind === 'file' ? route.file : site.index, route.kind === 'page');
  };
}

/**
 * Serves the console when TDA_CONSOLE_DIR is set (before the Nest routes: call it right after
 * the app is created). Unset: nothing is mounted and `/` stays a 404 like today.
 */
export function mountConsole(
  app: { use(middleware: Middleware): unknown },
  config: Pick<OrchestratorConfig, 'TDA_CONSOLE_DIR'>,
): void {
  if (config.TDA_CONSOLE_DIR === undefined) return;
  app.use(consoleMiddleware(loadConsoleSite(config.TDA_CONSOLE_DIR)));
}
