import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type ProxyOptions } from 'vite';

const root = resolve(__dirname);

/**
 * Development only: `npx vite --config services/console/vite.config.ts` serves the console with hot reload
 * and sends API requests to an orchestrator (TDA_CONSOLE_API, default http://127.0.0.1:8080).
 * Browser navigations (Accept: text/html) stay here, as the orchestrator itself does it.
 */
const api: ProxyOptions = {
  target: process.env['TDA_CONSOLE_API'] ?? 'http://127.0.0.1:8080',
  changeOrigin: true,
  bypass: (req) => (req.headers.accept?.includes('text/html') === true ? '/index.html' : undefined),
};

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: resolve(root, '../../dist/console'),
    emptyOutDir: true,
    // elkjs alone is ~1.4 MB minified; it is loaded lazily, with the first graph.
    chunkSizeWarningLimit: 1600,
  },
  server: {
    proxy: Object.fromEntries(
      ['/runs', '/flows', '/me', '/admin', '/events', '/openapi.json'].map((path) => [path, api]),
    ),
  },
});
