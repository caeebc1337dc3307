import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HealthServerOptions {
  port: number;
  host?: string;
  /** Healthy unless this returns false (e.g. the transport is draining). */
  isHealthy?: () => boolean;
  /** Serves GET /metrics (Prometheus text) from these metrics when given. */
  metrics?: { render(): Promise<string>; contentType: string };
}

export interface HealthServer {
  /** The bound port (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * GET /healthz → 200 {"status":"ok"} or 503 {"status":"unavailable"}; GET /metrics → the
 * Prometheus exposition when metrics are given; anything else → 404. Cloud Run needs a listening
 * port even for a pull-only worker; this is all it serves.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    const { metrics } = options;
    if (request.method === 'GET' && path === '/metrics' && metrics !== undefined) {
      metrics.render().then(
        (text) => {
          response.writeHead(200, { 'content-type': metrics.contentType });
          response.end(text);
        },
        () => {
          response.writeHead(500, { 'content-type': 'application/json' });
          response.end('{"status":"metrics_unavailable"}');
        },
      );
      return;
    }
    if (request.method !== 'GET' || path !== '/healthz') {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end('{"status":"not_found"}');
      return;
    }
    const healthy = options.isHealthy?.() ?? true;
    response.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' });
    response.end(healthy ? '{"status":"ok"}' : '{"status":"unavailable"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}
