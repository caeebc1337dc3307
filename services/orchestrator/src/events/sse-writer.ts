/** The members of Node's ServerResponse an event stream uses (structural: no @types/express). */
export interface StreamResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  flushHeaders(): void;
  write(chunk: string): boolean;
  end(): void;
  writableEnded: boolean;
}

/** What a client reconnects after (ms) when a stream ends or breaks. */
export const SSE_RETRY_MS = 3_000;

/** One SSE field value on one line: data is JSON (no raw newlines); ids and names are ours. */
function line(value: string): string {
  return value.replace(/[\r\n]/g, ' ');
}

/**
 * text/event-stream framing (WHATWG HTML §9.2): `id:`, `event:`, `data:` lines and a blank
 * line per event, comments for heartbeats. Headers disable caching, transformation and proxy
 * buffering (X-Accel-Buffering) so each event leaves at once, also behind Cloud Run's front end.
 */
export class SseWriter {
  constructor(private readonly response: StreamResponse) {}

  open(): void {
    this.response.statusCode = 200;
    this.response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.response.setHeader('Cache-Control', 'no-cache, no-transform');
    this.response.setHeader('Connection', 'keep-alive');
    this.response.setHeader('X-Accel-Buffering', 'no');
    this.response.flushHeaders();
    this.response.write(`retry: ${String(SSE_RETRY_MS)}\n\n`);
  }

  event(id: string, type: string, data: unknown): void {
    if (this.response.writableEnded) return;
    this.response.write(`id: ${line(id)}\nevent: ${line(type)}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  comment(text: string): void {
    if (!this.response.writableEnded) this.response.write(`: ${line(text)}\n\n`);
  }

  end(): void {
    if (!this.response.writableEnded) this.response.end();
  }
}

/** Parses a text/event-stream body into events (clients and tests; ignores comments). */
export function parseSse(text: string): { id?: string; event: string; data: string }[] {
  const events: { id?: string; event: string; data: string }[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const raw of block.split(/\r?\n/)) {
      const colon = raw.indexOf(':');
      if (raw === '' || colon === 0) continue;
      const field = colon < 0 ? raw : raw.slice(0, colon);
      const value = colon < 0 ? '' : raw.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0)
      events.push({ ...(id === undefined ? {} : { id }), event, data: data.join('\n') });
  }
  return events;
}
