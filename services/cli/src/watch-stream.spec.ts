import type { FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { ApiClient } from './api-client';
import { readServerEvents } from './sse-client';
import { finishedFlow1 } from './testing/run-view.fixtures';
import { watchRun } from './watch';

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

const sse = (chunks: string[]): Response =>
  new Response(body(chunks), { status: 200, headers: { 'content-type': 'text/event-stream' } });

function running(): FlowRun {
  const run = structuredClone(finishedFlow1());
  run.status = 'RUNNING';
  delete run.finishedAt;
  return run;
}

/** GET /runs/{id} answers `runs` in turn; GET …/events answers `streams` in turn. */
function fakeApi(runs: FlowRun[], streams: (() => Response)[]) {
  const seen: { url: string; lastEventId: string | null }[] = [];
  let r = 0;
  let s = 0;
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    const headers = new Headers(init?.headers);
    seen.push({ url, lastEventId: headers.get('last-event-id') });
    if (url.endsWith('/events')) {
      const answer = streams[Math.min(s, streams.length - 1)];
      s += 1;
      return answer?.() ?? new Response('{}', { status: 500 });
    }
    const run = runs[Math.min(r, runs.length - 1)];
    r += 1;
    return new Response(JSON.stringify(run), { status: 200 });
  }) as typeof fetch;
  return { client: new ApiClient({ baseUrl: 'http://api.test', token: 't', fetchImpl }), seen };
}

describe('readServerEvents', () => {
  it('frames events across chunk boundaries, CRLF and comments', async () => {
    const events = [];
    for await (const e of readServerEvents(
      body([
        'retry: 3000\n\n: heartbeat\n\nid: a1\nevent: run.st',
        'ep.changed\r\ndata: {"x":1}\r\n\r\nid: a2\ndata: 2\n\n',
      ]),
    )) {
      events.push(e);
    }
    expect(events).toEqual([
      { id: 'a1', event: 'run.step.changed', data: '{"x":1}' },
      { id: 'a2', event: 'message', data: '2' },
    ]);
  });
});

describe('tda watch on the live stream', () => {
  it('redraws on each event and stops at the terminal run, without polling', async () => {
    const final = finishedFlow1();
    const { client, seen } = fakeApi(
      [running(), running(), final],
      [
        () =>
          sse([
            'id: t1\nevent: run.step.changed\ndata: {}\n\n',
            'id: t2\nevent: run.status.changed\ndata: {}\n\n',
          ]),
      ],
    );
    const notes: string[] = [];
    const out = { write: (t: string) => t.length > 0 };
    const result = await watchRun(client, final.runId, { out, note: (t) => notes.push(t) });
    expect(result.status).toBe('SUCCEEDED');
    expect(notes).toEqual([]);
    expect(seen.filter((x) => x.url.endsWith('/events'))).toHaveLength(1);
  });

  it('reconnects with Last-Event-ID when the server ends the stream before the run ends', async () => {
    const final = finishedFlow1();
    const { client, seen } = fakeApi(
      [running(), running(), running(), final],
      [
        () => sse(['id: t1\nevent: run.step.changed\ndata: {}\n\n']),
        () => sse(['id: t2\nevent: run.status.changed\ndata: {}\n\n']),
      ],
    );
    const out = { write: (t: string) => t.length > 0 };
    await watchRun(client, final.runId, { out });
    expect(seen.filter((x) => x.url.endsWith('/events')).map((x) => x.lastEventId)).toEqual([
      null,
      't1',
    ]);
  });

  it('falls back to polling, saying so once, when the stream is unavailable', async () => {
    const final = finishedFlow1();
    const notFound = () =>
      new Response(JSON.stringify({ code: 'NOT_FOUND', message: 'Cannot GET /runs/x/events' }), {
        status: 404,
      });
    const { client, seen } = fakeApi([running(), running(), final], [notFound]);
    const notes: string[] = [];
    const out = { write: (t: string) => t.length > 0 };
    const result = await watchRun(client, final.runId, {
      out,
      intervalMs: 0,
      note: (t) => notes.push(t),
    });
    expect(result.status).toBe('SUCCEEDED');
    expect(notes).toEqual([
      'live events unavailable (NOT_FOUND: Cannot GET /runs/x/events); polling every 0 s',
    ]);
    expect(seen.filter((x) => x.url.endsWith('/events'))).toHaveLength(1);
  });
});
