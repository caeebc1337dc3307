import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  GcpApiError,
  type GcpRestClient,
  type GcpRestRequest,
  type GcpRestResponse,
} from '../gcp/gcp-rest.client';

export interface FakeRouteContext {
  /** Regex groups of the matched path (after `https://<service>.googleapis.com`). */
  groups: string[];
  request: GcpRestRequest;
  /** The fake's resource store: full resource name → JSON resource. */
  resources: Map<string, unknown>;
}

export type FakeRouteHandler = (context: FakeRouteContext) => GcpRestResponse;

interface Route {
  method: GcpRestRequest['method'];
  service: string;
  path: RegExp;
  handle: FakeRouteHandler;
}

/**
 * An in-memory stand-in for the Google REST APIs `tda infra apply` calls. Each API module
 * registers the routes it needs (`installXxxRoutes(fake)`); an unrouted call fails loudly (a
 * reconciler calling an API nobody modelled is a test failure, not a silent 200). Usable in
 * process (it is a GcpRestClient) and over HTTP (`listen()`, for the CLI with an endpoint
 * override), so the same fake backs unit and end-to-end tests.
 */
export class FakeGcpApi implements GcpRestClient {
  readonly resources = new Map<string, unknown>();
  /** Every call in order, for assertions such as "the second apply only read". */
  readonly calls: { method: string; url: string }[] = [];
  private readonly routes: Route[] = [];
  private server: Server | undefined;

  on(
    method: GcpRestRequest['method'],
    service: string,
    path: RegExp,
    handle: FakeRouteHandler,
  ): this {
    this.routes.push({ method, service, path, handle });
    return this;
  }

  /**
   * Calls that can change something since `index`: not GET, and not a `:getIamPolicy` (Resource
   * Manager only offers policy reads as POST).
   */
  mutationsSince(index: number): { method: string; url: string }[] {
    return this.calls
      .slice(index)
      .filter((c) => c.method !== 'GET' && !c.url.endsWith(':getIamPolicy'));
  }

  request<T = unknown>(request: GcpRestRequest): Promise<GcpRestResponse<T>> {
    this.calls.push({ method: request.method, url: request.url });
    const match = /^https:\/\/([a-z0-9-]+)\.googleapis\.com(\/[^?]*)/.exec(request.url);
    if (match === null) {
      return Promise.reject(new GcpApiError(400, request, `not a googleapis.com URL`));
    }
    const [, service, path] = match;
    for (const route of this.routes) {
      if (route.method !== request.method || route.service !== service) continue;
      const groups = route.path.exec(path ?? '');
      if (groups === null) continue;
      const response = route.handle({
        groups: groups.slice(1).map((g) => decodeURIComponent(g)),
        request,
        resources: this.resources,
      });
      if ((response.status >= 200 && response.status < 300) || response.status === 404) {
        return Promise.resolve(response as GcpRestResponse<T>);
      }
      return Promise.reject(
        new GcpApiError(response.status, request, JSON.stringify(response.data)),
      );
    }
    return Promise.reject(
      new GcpApiError(
        501,
        request,
        `FakeGcpApi has no route for ${request.method} ${service}${path ?? ''}`,
      ),
    );
  }

  /**
   * Serves the fake over HTTP as `http://127.0.0.1:<port>/<service>/<path>` (the layout
   * GoogleRestClient's endpointOverride produces). Returns the base URL.
   */
  async listen(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const [, service, ...rest] = url.pathname.split('/');
        const params = Object.fromEntries(url.searchParams.entries());
        const text = Buffer.concat(chunks).toString('utf8');
        const request: GcpRestRequest = {
          method: (req.method ?? 'GET') as GcpRestRequest['method'],
          url: `https://${service ?? ''}.googleapis.com/${rest.join('/')}`,
          ...(Object.keys(params).length > 0 ? { params } : {}),
          ...(text === '' ? {} : { body: JSON.parse(text) as unknown }),
        };
        this.request(request).then(
          (response) => {
            res.writeHead(response.status, { 'content-type': 'application/json' });
            res.end(JSON.stringify(response.data ?? {}));
          },
          (error: unknown) => {
            const status = error instanceof GcpApiError ? error.status : 500;
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { message: String(error) } }));
          },
        );
      });
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
