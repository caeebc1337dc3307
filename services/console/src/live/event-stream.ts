import { SseParser, type SseMessage } from './sse-parser';

/**
 * connecting: opening the stream; live: events flow; polling: the stream is unavailable (404,
 * a network error, a limit) and the page refetches every few seconds instead while it retries;
 * closed: the stream ended for good (a finished run) or the caller stopped it.
 */
export type StreamState = 'connecting' | 'live' | 'polling' | 'closed';

export interface EventStreamOptions {
  /** Absolute URL of the stream. */
  url: string;
  signal: AbortSignal;
  onEvent(message: SseMessage): void;
  onState(state: StreamState): void;
  /** Headers of every attempt (Authorization); Last-Event-ID is added on reconnects. */
  headers?: () => Record<string, string>;
  /** After the server ended the stream normally: reconnect? (default yes) */
  shouldReconnect?: () => boolean;
  /** 401: the session is gone; the stream stops. */
  onUnauthorized?: () => void;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

/** Reconnect delay after `failures` consecutive failures: exponential, capped, half jittered. */
export function backoffMs(failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(30_000, 1_000 * 2 ** Math.min(Math.max(failures, 0), 5));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

type Attempt = 'ended' | 'failed' | 'stop';

/**
 * Follows a text/event-stream with fetch (EventSource cannot send Authorization): parses it,
 * resumes after a drop with `Last-Event-ID` so no event is missed, backs off while it fails, and
 * stops when `signal` aborts. Resolves when it stops for good.
 */
export async function followEventStream(options: EventStreamOptions): Promise<void> {
  const sleep = options.sleep ?? abortableSleep;
  const state: { lastEventId?: string; failures: number } = { failures: 0 };
  options.onState('connecting');
  while (!options.signal.aborted) {
    const outcome = await attempt(options, state);
    if (outcome === 'stop' || options.signal.aborted) break;
    if (outcome === 'ended' && !(options.shouldReconnect?.() ?? true)) {
      options.onState('closed');
      return;
    }
    options.onState('polling');
    await sleep(backoffMs(state.failures, options.random), options.signal);
  }
  options.onState('closed');
}

async function attempt(
  options: EventStreamOptions,
  state: { lastEventId?: string; failures: number },
): Promise<Attempt> {
  const headers: Record<string, string> = {
    ...options.headers?.(),
    Accept: 'text/event-stream',
    'Cache-Control': 'no-cache',
  };
  if (state.lastEventId !== undefined) headers['Last-Event-ID'] = state.lastEventId;
  try {
    const response = await (options.fetch ?? fetch)(options.url, {
      headers,
      signal: options.signal,
      cache: 'no-store',
    });
    if (response.status === 401) {
      options.onUnauthorized?.();
      return 'stop';
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      state.failures += 1;
      return 'failed';
    }
    options.onState('live');
    const activity = await consume(response.body, options, state);
    // A stream that ends without an event or heartbeat (a server closing at once) counts as a
    // failure, so a loop of empty connections backs off.
    state.failures = activity > 0 ? 0 : state.failures + 1;
    return 'ended';
  } catch {
    if (options.signal.aborted) return 'stop';
    state.failures += 1;
    return 'failed';
  }
}

/** Reads the stream to its end; returns how many events and heartbeats it carried. */
async function consume(
  body: ReadableStream<Uint8Array>,
  options: EventStreamOptions,
  state: { lastEventId?: string },
): Promise<number> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let events = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const message of parser.push(decoder.decode(value, { stream: true }))) {
      events += 1;
      options.onEvent(message);
    }
    if (parser.lastEventId !== undefined) state.lastEventId = parser.lastEventId;
  }
  return events + parser.comments;
}
