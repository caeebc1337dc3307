import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the generateContent REST endpoint (Gemini API and Vertex AI paths), for
 * tests that drive the REAL @google/genai client through `baseUrl`. Each test scripts the answers
 * (a queue) and asserts on the recorded requests; credentials are never recorded.
 */

/** One scripted answer, consumed by one request in arrival order. */
export type FakeGeminiReply =
  /** An HTTP answer with a JSON body, optionally after `delayMs`. */
  | { kind: 'json'; status: number; body: unknown; delayMs?: number }
  /** No answer at all: the request stays open until the client aborts or the server stops. */
  | { kind: 'hang' }
  /** Status 200 and headers, then the body never comes (a stall mid-response). */
  | { kind: 'stall' }
  /** The socket is destroyed without an answer (a network failure). */
  | { kind: 'disconnect' };

export const fakeReply = {
  ok: (body: unknown, options: { delayMs?: number } = {}): FakeGeminiReply => ({
    kind: 'json',
    status: 200,
    body,
    ...options,
  }),
  /** A Google API error answer (`{"error":{code,message,status,details}}`). */
  error: (
    status: number,
    googleStatus: string,
    message: string,
    options: { reason?: string; delayMs?: number } = {},
  ): FakeGeminiReply => ({
    kind: 'json',
    status,
    body: googleErrorBody(status, googleStatus, message, options.reason),
    ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
  }),
  hang: (): FakeGeminiReply => ({ kind: 'hang' }),
  stall: (): FakeGeminiReply => ({ kind: 'stall' }),
  disconnect: (): FakeGeminiReply => ({ kind: 'disconnect' }),
};

export function googleErrorBody(
  code: number,
  status: string,
  message: string,
  reason?: string,
): { error: Record<string, unknown> } {
  return {
    error: {
      code,
      message,
      status,
      ...(reason !== undefined
        ? {
            details: [
              {
                '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                reason,
                domain: 'googleapis.com',
              },
            ],
          }
        : {}),
    },
  };
}

export interface FakeCandidateSpec {
  /** Text parts in order; `{ thought: true, text }` marks a thought summary. */
  parts?: ({ text: string; thought?: boolean } | Record<string, unknown>)[];
  finishReason?: string;
  safetyRatings?: unknown[];
}

export interface GenerateContentBodySpec {
  candidates?: FakeCandidateSpec[];
  usageMetadata?: Record<string, number>;
  modelVersion?: string;
  responseId?: string;
  promptFeedback?: Record<string, unknown>;
}

/** A generateContent REST response body. */
export function generateContentBody(spec: GenerateContentBodySpec): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (spec.candidates !== undefined) {
    body['candidates'] = spec.candidates.map((candidate, index) => ({
      ...(candidate.parts !== undefined
        ? { content: { role: 'model', parts: candidate.parts } }
        : {}),
      ...(candidate.finishReason !== undefined ? { finishReason: candidate.finishReason } : {}),
      ...(candidate.safetyRatings !== undefined ? { safetyRatings: candidate.safetyRatings } : {}),
      index,
    }));
  }
  if (spec.usageMetadata !== undefined) body['usageMetadata'] = spec.usageMetadata;
  if (spec.modelVersion !== undefined) body['modelVersion'] = spec.modelVersion;
  if (spec.responseId !== undefined) body['responseId'] = spec.responseId;
  if (spec.promptFeedback !== undefined) body['promptFeedback'] = spec.promptFeedback;
  return body;
}

/** The common case: one candidate whose only part is `text`, finishReason STOP. */
export function textResponseBody(
  text: string,
  extra: Omit<GenerateContentBodySpec, 'candidates'> = {},
): Record<string, unknown> {
  return generateContentBody({
    candidates: [{ parts: [{ text }], finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'fake-model-001',
    responseId: 'fake-response-1',
    ...extra,
  });
}

/** The generateContent request body as the REST API receives it (only what tests look at). */
export interface FakeGeminiRequestBody {
  contents?: { role?: string; parts?: Record<string, unknown>[] }[];
  systemInstruction?: { role?: string; parts?: Record<string, unknown>[] };
  generationConfig?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface FakeGeminiRequest {
  method: string;
  /** URL path; the `key` query parameter is never recorded. */
  path: string;
  api: 'gemini' | 'vertex';
  apiVersion: string;
  model: string;
  project?: string;
  location?: string;
  /** How the request authenticated (the credential itself is not recorded). */
  auth: 'api-key-header' | 'api-key-query' | 'bearer' | 'none';
  /** Lower-cased headers without x-goog-api-key and authorization. */
  headers: Record<string, string>;
  /** The parsed JSON body (undefined when it is not JSON). */
  body: FakeGeminiRequestBody | undefined;
  /** True when the client went away before an answer was written (abort, timeout). */
  aborted: boolean;
}

export interface FakeGeminiServerOptions {
  /**
   * When set, API-key requests must carry this key (header or `key` query), like the real API:
   * no key → 403 PERMISSION_DENIED, a different key → 400 INVALID_ARGUMENT / API_KEY_INVALID.
   * Vertex AI paths are not checked (their credential is an OAuth token or a test stand-in).
   */
  apiKey?: string;
}

const PATH =
  /^\/([^/]+)\/(?:projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/)?models\/([^/:]+):generateContent$/;

const SECRET_HEADERS = new Set(['x-goog-api-key', 'authorization']);

export class FakeGeminiServer {
  /** Every generateContent request, in arrival order (scripted or not). */
  readonly requests: FakeGeminiRequest[] = [];
  private readonly queue: FakeGeminiReply[] = [];
  private readonly pending = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    private readonly options: FakeGeminiServerOptions,
  ) {}

  /** Listens on 127.0.0.1 on a free port. */
  static async start(options: FakeGeminiServerOptions = {}): Promise<FakeGeminiServer> {
    let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    const server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const fake = new FakeGeminiServer(server, `http://127.0.0.1:${port}`, options);
    handler = (req, res) => fake.handle(req, res);
    return fake;
  }

  /** Appends answers to the queue; a request finding it empty gets a 500 (an unscripted call). */
  enqueue(...replies: FakeGeminiReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  get callCount(): number {
    return this.requests.length;
  }

  /** Scripted answers not consumed yet. */
  get remainingReplies(): number {
    return this.queue.length;
  }

  lastRequest(): FakeGeminiRequest {
    const last = this.requests.at(-1);
    if (last === undefined) throw new Error('fake-gemini: no request received');
    return last;
  }

  /** Clears the queue and the recorded requests (between tests sharing one server). */
  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    for (const res of this.pending) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => this.answer(req, res, Buffer.concat(chunks).toString('utf8')));
  }

  private answer(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = PATH.exec(url.pathname);
    if (req.method !== 'POST' || match === null) {
      send(res, 404, googleErrorBody(404, 'NOT_FOUND', `fake-gemini: no route ${url.pathname}`));
      return;
    }
    const [, apiVersion = '', project, location, model = ''] = match;
    const queryKey = url.searchParams.get('key');
    const headerKey = header(req, 'x-goog-api-key');
    const bearer = header(req, 'authorization')?.startsWith('Bearer ') === true;
    url.searchParams.delete('key');
    const record: FakeGeminiRequest = {
      method: req.method,
      path: url.pathname + (url.search === '' ? '' : url.search),
      api: project !== undefined ? 'vertex' : 'gemini',
      apiVersion,
      model,
      ...(project !== undefined ? { project } : {}),
      ...(location !== undefined ? { location } : {}),
      auth:
        headerKey !== undefined
          ? 'api-key-header'
          : queryKey !== null
            ? 'api-key-query'
            : bearer
              ? 'bearer'
              : 'none',
      headers: Object.fromEntries(
        Object.entries(req.headers)
          .filter(([name]) => !SECRET_HEADERS.has(name))
          .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]),
      ),
      body: parseBody(raw),
      aborted: false,
    };
    this.requests.push(record);
    res.on('close', () => {
      this.pending.delete(res);
      if (!res.writableFinished) record.aborted = true;
    });
    this.pending.add(res);

    const presented = headerKey ?? queryKey ?? undefined;
    if (this.options.apiKey !== undefined && record.api === 'gemini') {
      if (presented === undefined) {
        send(res, 403, googleErrorBody(403, 'PERMISSION_DENIED', 'unregistered callers'));
        return;
      }
      if (presented !== this.options.apiKey) {
        send(
          res,
          400,
          googleErrorBody(400, 'INVALID_ARGUMENT', 'API key not valid', 'API_KEY_INVALID'),
        );
        return;
      }
    }

    const reply = this.queue.shift();
    if (reply === undefined) {
      send(res, 500, googleErrorBody(500, 'INTERNAL', 'fake-gemini: no scripted reply left'));
      return;
    }
    switch (reply.kind) {
      case 'hang':
        return;
      case 'stall':
        res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
        res.write('{"candidates": [');
        return;
      case 'disconnect':
        res.destroy();
        return;
      case 'json': {
        const delayMs = reply.delayMs ?? 0;
        if (delayMs <= 0) {
          send(res, reply.status, reply.body);
          return;
        }
        const timer = setTimeout(() => send(res, reply.status, reply.body), delayMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
    }
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function parseBody(raw: string): FakeGeminiRequestBody | undefined {
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as FakeGeminiRequestBody)
      : undefined;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}
