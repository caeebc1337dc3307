import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Header values as node:http gives them (lower-case names). */
export type HttpHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface HttpRouteRequest {
  headers: HttpHeaders;
  body: Buffer;
}

export interface HttpRouteResponse {
  status: number;
  /** Serialised as JSON. */
  body: unknown;
  /** Extra response headers (e.g. WWW-Authenticate on a 401). */
  headers?: Readonly<Record<string, string>>;
}

/** An ingress endpoint beside /healthz (e.g. a worker's POST /pubsub/push). */
export interface HttpRoute {
  method: 'POST';
  path: string;
  /** Larger bodies get 413 before the handler runs. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Maps its own failures to a status; a throw here becomes a bare 500. */
  handle(request: HttpRouteRequest): Promise<HttpRouteResponse>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  response.writeHead(status, { ...headers, 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** Reads the body up to `limit` bytes; undefined when it is larger (the rest is discarded). */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    });
    request.on('end', () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function serveRoute(route: HttpRoute, request: IncomingMessage, response: ServerResponse): void {
  if (request.method !== route.method) {
    response.setHeader('allow', route.method);
    sendJson(response, 405, {
      code: 'INVALID_REQUEST',
      message: `${route.path} accepts ${route.method} only`,
      details: { method: request.method },
    });
    return;
  }
  const limit = route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  readBody(request, limit)
    .then(async (body) => {
      if (body === undefined) {
        sendJson(response, 413, {
          code: 'INVALID_REQUEST',
          message: `request body larger than ${limit} bytes`,
          details: { limitBytes: limit },
        });
        return;
      }
      const result = await route.handle({ headers: request.headers, body });
      sendJson(response, result.status, result.body, result.headers);
    })
    .catch(() => {
      if (!response.headersSent) {
        sendJson(response, 500, { code: 'INTERNAL_ERROR', message: 'request failed', details: {} });
      }
    });
}

export interface HealthServerOptions {
  port: number;
  host?: string;
  /** Healthy unless this returns false (e.g. the transport is draining). */
  isHealthy?: () => boolean;
  /** Serves GET /metrics (Prometheus text) from these metrics when given. */
  metrics?: { render(): Promise<string>; contentType: string };
  /** Ingress endpoints (e.g. POST /pubsub/push); paths must not clash with the ones above. */
  routes?: readonly HttpRoute[];
}

export interface HealthServer {
  /** The bound port (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * GET /healthz → 200 {"status":"ok"} or 503 {"status":"unavailable"}; GET /metrics → the
 * Prometheus exposition when metrics are given; the given ingress routes; anything else → 404.
 * Cloud Run needs a listening port even for a pull-only worker.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    const { metrics } = options;
    const route = options.routes?.find((candidate) => candidate.path === path);
    if (route !== undefined) {
      serveRoute(route, request, response);
      return;
    }
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
