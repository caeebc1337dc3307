import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A local stand-in for news sources (feeds, the GDELT API), serving stored answers by path, for
 * tests that drive the real adapters over HTTP: no test reaches the internet.
 */

export type StubReply =
  | { kind: 'body'; status: number; body: string | Buffer; contentType: string }
  /** No answer: the request stays open until the client gives up or the server stops. */
  | { kind: 'hang' }
  /** The socket is destroyed without an answer. */
  | { kind: 'disconnect' };

export const stubReply = {
  xml: (body: string): StubReply => ({
    kind: 'body',
    status: 200,
    body,
    contentType: 'application/rss+xml',
  }),
  json: (body: string): StubReply => ({
    kind: 'body',
    status: 200,
    body,
    contentType: 'application/json',
  }),
  text: (body: string, status = 200): StubReply => ({
    kind: 'body',
    status,
    body,
    contentType: 'text/plain',
  }),
  status: (status: number): StubReply => ({
    kind: 'body',
    status,
    body: 'unavailable',
    contentType: 'text/plain',
  }),
  hang: (): StubReply => ({ kind: 'hang' }),
  disconnect: (): StubReply => ({ kind: 'disconnect' }),
};

/** A stored provider answer (testing/fixtures). */
export function fixture(name: string): string {
  return readFileSync(join(__dirname, 'fixtures', name), 'utf8');
}

export interface StubNewsServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Path (with query) of every request, in arrival order. */
  requests: string[];
  /** What a path (without query) answers from now on; an unknown path answers 404. */
  route(path: string, reply: StubReply): void;
  close(): Promise<void>;
}

export async function startStubNewsServer(
  routes: Record<string, StubReply> = {},
): Promise<StubNewsServer> {
  const table = new Map(Object.entries(routes));
  const requests: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const target = request.url ?? '/';
    requests.push(target);
    const reply = table.get(target.split('?')[0] ?? '/') ?? stubReply.status(404);
    if (reply.kind === 'hang') return;
    if (reply.kind === 'disconnect') {
      request.socket.destroy();
      return;
    }
    response.writeHead(reply.status, { 'content-type': reply.contentType });
    response.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    route: (path, reply) => table.set(path, reply),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
