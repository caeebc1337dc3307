import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestOrchestrator,
  TEST_TOKEN,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';
import { loadConsoleSite, routeConsoleRequest } from './console-static';

const INDEX =
  '<!doctype html><html><head><title>TDA console</title></head><body><div id="root"></div></body></html>';
// Over the 1 KiB gzip threshold.
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tda-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dir, '.secret'), 'never served');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('routeConsoleRequest', () => {
  const site = () => loadConsoleSite(dir);
  const route = (path: string, accept?: string, method = 'GET') =>
    routeConsoleRequest(site(), { method, path, accept }).kind;

  it('serves its files to anyone, and the page at / and for browser navigations', () => {
    expect(route('/assets/index-Ab12Cd34.js', '*/*')).toBe('file');
    expect(route('/', 'application/json')).toBe('page');
    expect(route('/runs/20260101-000000_BTC-USDT_abc123', 'text/html,application/xhtml+xml')).toBe(
      'page',
    );
    expect(route('/admin/tokens', 'text/html')).toBe('page');
    expect(route('/', undefined, 'HEAD')).toBe('page');
  });

  it('leaves API clients, other methods, server pages and missing files to the API', () => {
    expect(route('/runs/abc', 'application/json')).toBe('pass');
    expect(route('/runs/abc', '*/*')).toBe('pass');
    expect(route('/runs/abc', undefined)).toBe('pass');
    expect(route('/events/stream', 'text/event-stream')).toBe('pass');
    expect(route('/', 'text/html', 'POST')).toBe('pass');
    expect(route('/docs', 'text/html')).toBe('pass');
    expect(route('/docs/swagger-ui.css', 'text/html')).toBe('pass');
    expect(route('/openapi.json', 'text/html')).toBe('pass');
    expect(route('/favicon.ico', 'text/html')).toBe('pass');
    expect(route('/.secret', 'text/html')).toBe('page');
  });
});

describe('the console served by the orchestrator (TDA_CONSOLE_DIR)', () => {
  let orc: TestOrchestrator | undefined;
  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${orc?.baseUrl ?? ''}${path}`, { headers });

  it('answers / and deep links with index.html (no-cache, CSP), without a token', async () => {
    orc = await startTestOrchestrator({ env: { TDA_CONSOLE_DIR: dir } });
    for (const path of ['/', '/runs/20260101-000000_BTC-USDT_abc123?step=charts:1d', '/trigger']) {
      const response = await get(path, { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('vary')).toContain('Accept');
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await response.text()).toBe(INDEX);
    }
  });

  it('serves hashed assets for a year, gzipped when asked', async () => {
    orc = await startTestOrchestrator({ env: { TDA_CONSOLE_DIR: dir } });
    const response = await get('/assets/index-Ab12Cd34.js', { 'Accept-Encoding': 'gzip' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(await response.text()).toBe(SCRIPT);
    const icon = await get('/favicon.svg');
    expect(icon.headers.get('cache-control')).toBe('no-cache');
    const head = await fetch(`${orc.baseUrl}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('keeps the API as it is: JSON for API clients, auth on data routes, 404 for the rest', async () => {
    orc = await startTestOrchestrator({ env: { TDA_CONSOLE_DIR: dir } });
    const anonymous = await get('/runs', { Accept: 'application/json' });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 'UNAUTHENTICATED' });
    const list = await get('/runs', {
      Accept: 'application/json',
      Authorization: `Bearer ${TEST_TOKEN}`,
    });
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ runs: [] });
    const document = await get('/openapi.json', { Accept: 'text/html' });
    expect(document.headers.get('content-type')).toContain('application/json');
    for (const path of ['/favicon.ico', '/.secret', '/assets/..%2f..%2fpackage.json']) {
      const response = await get(path, { Accept: '*/*' });
      expect(response.status, path).toBe(404);
      expect(await response.text()).not.toContain('never served');
    }
  });

  it('is not mounted without TDA_CONSOLE_DIR: / is a 404 like any unknown route', async () => {
    orc = await startTestOrchestrator();
    const response = await get('/', { Accept: 'text/html' });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
  });

  it('refuses to boot on a directory without a built console', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'tda-console-empty-'));
    try {
      await expect(startTestOrchestrator({ env: { TDA_CONSOLE_DIR: empty } })).rejects.toThrow(
        /TDA_CONSOLE_DIR: .* has no index.html \(build the console: npm run console:build\)/,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
