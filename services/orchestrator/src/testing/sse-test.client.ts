import { parseSse } from '../events/sse-writer';

export interface SseEvent {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

export interface SseTestStream {
  status: number;
  /** The error body when the stream was refused. */
  body: unknown;
  events: SseEvent[];
  raw(): string;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  waitFor(predicate: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** A text/event-stream client for tests: fetch with headers, parsing events as they arrive. */
export async function openSse(
  url: string,
  options: { token: string | null; lastEventId?: string; headers?: Record<string, string> },
): Promise<SseTestStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.token !== null) headers['authorization'] = `Bearer ${options.token}`;
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const response = await fetch(url, { headers, signal: abort.signal });
  let text = '';
  const events: SseEvent[] = [];
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const body: unknown = await response.json();
    return {
      status: response.status,
      body,
      events,
      raw: () => '',
      ended: Promise.resolve(),
      waitFor: () => Promise.reject(new Error(`no stream: HTTP ${String(response.status)}`)),
      close: () => undefined,
    };
  }
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    if (reader === undefined) return;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
        const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
        const parsed = parseSse(complete).map((e) => ({
          ...(e.id === undefined ? {} : { id: e.id }),
          event: e.event,
          data: JSON.parse(e.data) as Record<string, unknown>,
        }));
        events.splice(0, events.length, ...parsed);
      }
    } catch {
      // aborted by close()
    }
  })();
  const waitFor = async (predicate: (e: SseEvent[]) => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(events)) {
      if (Date.now() > deadline) {
        throw new Error(`timed out; events: ${events.map((e) => e.event).join(', ')}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return {
    status: response.status,
    body: undefined,
    events,
    raw: () => text,
    ended,
    waitFor,
    close: () => abort.abort(),
  };
}
