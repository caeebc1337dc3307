import { createHash } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CRC32C } from '@google-cloud/storage';

export interface FakeGcsObject {
  data: Buffer;
  contentType: string;
  generation: number;
  metadata: Record<string, string>;
}

export interface FakeGcsRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

export interface FakeGcsServer {
  /** For `new Storage({ apiEndpoint })`. */
  endpoint: string;
  /** Keyed `<bucket>/<name>`. */
  objects: Map<string, FakeGcsObject>;
  requests: FakeGcsRequest[];
  /**
   * The next `count` uploads answer `status` without storing (`commit: false`, a rejected
   * request) or after storing (`commit: true`, a success whose response was lost).
   */
  failUploads(count: number, status: number, options?: { commit?: boolean }): void;
  /** Drops faults not consumed yet. */
  clearFaults(): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server speaking the slice of the GCS JSON API that GcsArtifactStore uses:
 * multipart uploads with the ifGenerationMatch precondition (412 when it does not hold, 400 on an
 * md5Hash mismatch), object metadata GET (404 when absent) and `alt=media` downloads with the
 * x-goog-hash header the client validates. Requests are handled one body at a time on the event
 * loop, so a precondition check and the write that follows are atomic, as on GCS.
 */
export async function startFakeGcsServer(): Promise<FakeGcsServer> {
  const objects = new Map<string, FakeGcsObject>();
  const requests: FakeGcsRequest[] = [];
  let generationCounter = 1_700_000_000_000_000;
  const uploadFaults: Array<{ status: number; commit: boolean }> = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      sendError(res, 500, error instanceof Error ? error.message : 'internal');
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const method = req.method ?? 'GET';
    requests.push({ method, path: url.pathname, query });
    const body = await readBody(req);

    const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
    if (upload && method === 'POST') {
      return handleUpload(res, decodeURIComponent(upload[1] ?? ''), query, req, body);
    }
    const object = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(url.pathname);
    if (object && method === 'GET') {
      const bucket = decodeURIComponent(object[1] ?? '');
      const name = decodeURIComponent(object[2] ?? '');
      const stored = objects.get(`${bucket}/${name}`);
      if (stored === undefined) return sendError(res, 404, 'No such object', 'notFound');
      if (query['alt'] === 'media') {
        res.writeHead(200, {
          'content-type': stored.contentType,
          'content-length': String(stored.data.length),
          'x-goog-hash': `crc32c=${crc32c(stored.data)},md5=${md5(stored.data)}`,
          'x-goog-stored-content-encoding': 'identity',
          'x-goog-generation': String(stored.generation),
        });
        res.end(stored.data);
        return;
      }
      return sendJson(res, 200, resource(bucket, name, stored));
    }
    sendError(res, 501, `fake GCS does not implement ${method} ${url.pathname}`);
  }

  function handleUpload(
    res: ServerResponse,
    bucket: string,
    query: Record<string, string>,
    req: IncomingMessage,
    body: Buffer,
  ): void {
    if (query['uploadType'] !== 'multipart') {
      return sendError(res, 501, `uploadType ${query['uploadType'] ?? '(none)'} not supported`);
    }
    const parts = parseMultipart(req.headers['content-type'] ?? '', body);
    const [metaPart, dataPart] = parts;
    if (parts.length !== 2 || metaPart === undefined || dataPart === undefined) {
      return sendError(res, 400, 'expected a two-part multipart/related body');
    }
    const meta = JSON.parse(metaPart.body.toString('utf8')) as {
      name?: string;
      contentType?: string;
      md5Hash?: string;
      metadata?: Record<string, string>;
    };
    const name = query['name'] ?? meta.name;
    if (name === undefined) return sendError(res, 400, 'missing object name', 'required');
    const key = `${bucket}/${name}`;
    const existing = objects.get(key);
    const ifGenerationMatch = query['ifGenerationMatch'];
    if (ifGenerationMatch !== undefined) {
      const current = existing?.generation ?? 0;
      if (Number(ifGenerationMatch) !== current) {
        return sendError(
          res,
          412,
          'At least one of the pre-conditions you specified did not hold.',
          'conditionNotMet',
        );
      }
    }
    const data = dataPart.body;
    if (meta.md5Hash !== undefined && meta.md5Hash !== md5(data)) {
      return sendError(res, 400, "Provided MD5 hash doesn't match calculated MD5 hash.", 'invalid');
    }
    const fault = uploadFaults.shift();
    if (fault !== undefined && !fault.commit) return sendError(res, fault.status, 'injected fault');
    const stored: FakeGcsObject = {
      data,
      contentType: meta.contentType ?? dataPart.contentType,
      generation: ++generationCounter,
      metadata: meta.metadata ?? {},
    };
    objects.set(key, stored);
    if (fault !== undefined) return sendError(res, fault.status, 'injected fault after commit');
    sendJson(res, 200, resource(bucket, name, stored));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    requests,
    failUploads(count, status, options = {}) {
      for (let i = 0; i < count; i++)
        uploadFaults.push({ status, commit: options.commit ?? false });
    },
    clearFaults() {
      uploadFaults.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function resource(bucket: string, name: string, stored: FakeGcsObject): Record<string, unknown> {
  return {
    kind: 'storage#object',
    bucket,
    name,
    generation: String(stored.generation),
    metageneration: '1',
    contentType: stored.contentType,
    size: String(stored.data.length),
    md5Hash: md5(stored.data),
    crc32c: crc32c(stored.data),
    metadata: stored.metadata,
  };
}

function md5(data: Buffer): string {
  return createHash('md5').update(data).digest('base64');
}

function crc32c(data: Buffer): string {
  const hash = new CRC32C();
  hash.update(data);
  return hash.toString();
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** multipart/related as the client writes it: `--b\r\nContent-Type: t\r\n\r\n<body>\r\n` ... `--b--`. */
function parseMultipart(
  contentType: string,
  body: Buffer,
): Array<{ contentType: string; body: Buffer }> {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (boundary === undefined) return [];
  const delimiter = Buffer.from(`--${boundary}`);
  const positions: number[] = [];
  for (let at = body.indexOf(delimiter); at >= 0; at = body.indexOf(delimiter, at + 1)) {
    positions.push(at);
  }
  const parts: Array<{ contentType: string; body: Buffer }> = [];
  for (let i = 0; i + 1 < positions.length; i++) {
    const chunk = body.subarray((positions[i] ?? 0) + delimiter.length, positions[i + 1]);
    const headerEnd = chunk.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const headers = chunk.subarray(0, headerEnd).toString('utf8');
    const partType = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? '';
    // the part body ends with the CRLF that precedes the next delimiter
    parts.push({
      contentType: partType.trim(),
      body: chunk.subarray(headerEnd + 4, chunk.length - 2),
    });
  }
  return parts;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, message: string, reason = 'fake'): void {
  sendJson(res, status, { error: { code: status, message, errors: [{ message, reason }] } });
}
