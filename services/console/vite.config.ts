import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, loadEnv, type ProxyOptions } from 'vite';

const root = resolve(__dirname);

/**
 * Development only: `npx vite --config services/console/vite.config.ts` serves the console with
 * hot reload and sends API requests to an orchestrator: TDA_CONSOLE_API (environment or .env,
 * read through Vite's loadEnv), default http://127.0.0.1:8080. Browser navigations
 * (Accept: text/html) stay here, as the orchestrator itself does it.
 */
function apiTarget(mode: string): string {
  const target = loadEnv(mode, root, 'TDA_CONSOLE_')['TDA_CONSOLE_API'] ?? 'http://127.0.0.1:8080';
  if (!URL.canParse(target)) throw new Error(`TDA_CONSOLE_API is not a URL: ${target}`);
  return target;
}

const proxyTo = (target: string): ProxyOptions => ({
  target,
  changeOrigin: true,
  bypass: (req) => (req.headers.accept?.includes('text/html') === true ? '/index.html' : undefined),
});

const API_PATHS = [
  '/runs',
  '/flows',
  '/me',
  '/admin',
  '/events',
  '/openapi.json',
  '/schedules',
  '/signals',
];

export default defineConfig(({ mode }) => {
  const api = proxyTo(apiTarget(mode));
  return {
    root,
    base: '/',
    plugins: [react()],
    build: {
      outDir: resolve(root, '../../dist/console'),
      emptyOutDir: true,
      // elkjs alone is ~1.4 MB minified; it is loaded lazily, with the first graph.
      chunkSizeWarningLimit: 1600,
    },
    server: { proxy: Object.fromEntries(API_PATHS.map((path) => [path, api])) },
  };
});
