import { describe, expect, it } from 'vitest';
import { backoffMs, followEventStream, type StreamState } from './event-stream';
import type { SseMessage } from './sse-parser';

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

interface Scripted {
  status: number;
  chunks?: string[];
  throws?: boolean;
}

/** A fetch that answers the scripted responses in order and records the request headers. */
function scriptedFetch(script: Scripted[]) {
  const requests: Headers[] = [];
  const impl = (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    requests.push(new Headers(init?.headers));
    const next = script.shift();
    if (next === undefined || next.throws === true) return Promise.reject(new TypeError('down'));
    return Promise.resolve(
      new Response(next.chunks === undefined ? null : streamOf(...next.chunks), {
        status: next.status,
      }),
    );
  };
  return { impl: impl as typeof fetch, requests };
}

describe('followEventStream', () => {
  it('resumes with Last-Event-ID after a drop, backs off on failures, stops on abort', async () => {
    const { impl, requests } = scriptedFetch([
      { status: 200, chunks: ['id: 4\nevent: run.created\ndata: {"runId":"a"}\n\n'] },
      { status: 404, chunks: ['{"code":"NOT_FOUND"}'] },
      { throws: true, status: 0 },
      { status: 200, chunks: ['id: 5\nevent: run.created\n', 'data: {"runId":"b"}\n\n'] },
    ]);
    const controller = new AbortController();
    const events: SseMessage[] = [];
    const states: StreamState[] = [];
    const sleeps: number[] = [];
    await followEventStream({
      url: 'http://x/events/stream',
      signal: controller.signal,
      fetch: impl,
      random: () => 0,
      headers: () => ({ Authorization: 'Bearer t' }),
      onEvent: (m) => events.push(m),
      onState: (s) => states.push(s),
      shouldReconnect: () => events.length < 2,
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    });
    expect(events.map((e) => e.data)).toEqual(['{"runId":"a"}', '{"runId":"b"}']);
    expect(requests.map((h) => h.get('Last-Event-ID'))).toEqual([null, '4', '4', '4']);
    expect(requests.every((h) => h.get('Authorization') === 'Bearer t')).toBe(true);
    expect(requests[0]?.get('Accept')).toBe('text/event-stream');
    // after a good stream: the shortest delay; then growing with each failure
    expect(sleeps).toEqual([500, 1000, 2000]);
    expect(states).toEqual([
      'connecting',
      'live',
      'polling',
      'polling',
      'polling',
      'live',
      'closed',
    ]);
  });

  it('stops at once on 401 and tells the caller', async () => {
    const { impl } = scriptedFetch([{ status: 401, chunks: ['{}'] }]);
    let unauthorized = 0;
    const states: StreamState[] = [];
    await followEventStream({
      url: 'http://x/s',
      signal: new AbortController().signal,
      fetch: impl,
      onEvent: () => undefined,
      onState: (s) => states.push(s),
      onUnauthorized: () => (unauthorized += 1),
      sleep: () => Promise.reject(new Error('must not sleep')),
    });
    expect(unauthorized).toBe(1);
    expect(states).toEqual(['connecting', 'closed']);
  });

  it('does not reconnect after an abort during the backoff', async () => {
    const { impl, requests } = scriptedFetch([{ status: 503, chunks: [''] }]);
    const controller = new AbortController();
    await followEventStream({
      url: 'http://x/s',
      signal: controller.signal,
      fetch: impl,
      onEvent: () => undefined,
      onState: () => undefined,
      sleep: () => {
        controller.abort();
        return Promise.resolve();
      },
    });
    expect(requests).toHaveLength(1);
  });
});

describe('backoffMs', () => {
  it('doubles from 1 s to a 30 s ceiling, jittered within its upper half', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map((n) => backoffMs(n, () => 1))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
    expect(backoffMs(3, () => 0)).toBe(4000);
  });
});
