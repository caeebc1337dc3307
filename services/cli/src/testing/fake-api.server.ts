import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake API received. */
export interface FakeApiRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body, '' when there is none. */
  body: string;
}

/** What the fake answers: an HTTP status and a JSON body. */
export interface FakeApiAnswer {
  status: number;
  body: unknown;
  /** Extra response headers (e.g. ETag). */
  headers?: Record<string, string>;
}

export interface FakeApiServer {
  /** `http://127.0.0.1:<port>`, for the CLI's API target. */
  baseUrl: string;
  /** Every request received, oldest first. */
  requests: FakeApiRequest[];
  close(): Promise<void>;
}

/**
 * A loopback stand-in for the orchestrator API in the CLI tests: records every request (body read
 * to the end) and answers with what `route` returns, as JSON.
 */
export async function startFakeApiServer(
  route: (request: FakeApiRequest) => FakeApiAnswer,
): Promise<FakeApiServer> {
  const requests: FakeApiRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(request);
      const answer = route(request);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      ),
  };
}
