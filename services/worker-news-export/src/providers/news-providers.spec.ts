import { rejectionOf } from '@tda/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewsQuery } from '../news-provider.port';
import {
  fixture,
  startStubNewsServer,
  stubReply,
  type StubNewsServer,
} from '../testing/stub-news-server';
import { GdeltNewsProvider, gdeltQuery, gdeltRequestUrl } from './gdelt-news.provider';
import { NewsSourceError } from './http-get';
import { RssNewsProvider } from './rss-news.provider';

const servers: StubNewsServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function stub(routes: Parameters<typeof startStubNewsServer>[0]) {
  const server = await startStubNewsServer(routes);
  servers.push(server);
  return server;
}

const HTTP = { timeoutMs: 2_000, maxBytes: 200_000 };

function query(overrides: Partial<NewsQuery> = {}): NewsQuery {
  return {
    terms: ['bitcoin', 'btc'],
    from: Date.parse('2026-09-17T00:00:00Z'),
    to: Date.parse('2026-09-20T00:00:00Z'),
    maxItems: 20,
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe('RssNewsProvider (stored feeds on a local server)', () => {
  it('asks every feed and returns all their entries; the sources are hosts only', async () => {
    const server = await stub({
      '/rss': stubReply.xml(fixture('cryptodesk.rss.xml')),
      '/atom': stubReply.xml(fixture('chainwire.atom.xml')),
    });
    const provider = new RssNewsProvider({
      feeds: [`${server.url}/rss?token=s3cret`, `${server.url}/atom`],
      ...HTTP,
    });
    const batch = await provider.fetch(query());
    expect(batch.entries).toHaveLength(20);
    expect(batch.selectedByQuery).toBe(false);
    const host = new URL(server.url).host;
    expect(batch.sources).toEqual([
      { kind: 'feed', host, status: 'ok', fetched: 14 },
      { kind: 'feed', host, status: 'ok', fetched: 6 },
    ]);
    expect(server.requests.sort()).toEqual(['/atom', '/rss?token=s3cret']);
  });

  it('a failing feed is reported and the others are used', async () => {
    const server = await stub({
      '/rss': stubReply.xml(fixture('cryptodesk.rss.xml')),
      '/down': stubReply.status(503),
      '/html': stubReply.text('<html><body>Just a moment…</body></html>'),
    });
    const provider = new RssNewsProvider({
      feeds: [`${server.url}/rss`, `${server.url}/down?key=s3cret`, `${server.url}/html`],
      ...HTTP,
    });
    const batch = await provider.fetch(query());
    expect(batch.entries).toHaveLength(14);
    expect(batch.sources.map((s) => [s.status, s.error])).toEqual([
      ['ok', undefined],
      ['failed', 'HTTP 503'],
      ['failed', 'not an RSS or Atom feed'],
    ]);
    expect(JSON.stringify(batch.sources)).not.toContain('s3cret');
  });

  it('no feed answered: UPSTREAM_UNAVAILABLE, retryable when one failure was transient', async () => {
    const server = await stub({
      '/down': stubReply.status(502),
      '/gone': stubReply.status(404),
      '/drop': stubReply.disconnect(),
    });
    const transient = await rejectionOf(
      new RssNewsProvider({ feeds: [`${server.url}/gone`, `${server.url}/down`], ...HTTP }).fetch(
        query(),
      ),
    );
    expect(transient).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect((transient as Error).message).toMatch(
      /no news feed answered \(2\): .*HTTP 404; .*HTTP 502/,
    );
    const network = await rejectionOf(
      new RssNewsProvider({ feeds: [`${server.url}/drop`], ...HTTP }).fetch(query()),
    );
    expect(network).toMatchObject({ retryable: true });
    expect((network as Error).message).toMatch(/unreachable/);
    const permanent = await rejectionOf(
      new RssNewsProvider({ feeds: [`${server.url}/gone?key=s3cret`], ...HTTP }).fetch(query()),
    );
    expect(permanent).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: false });
    expect(JSON.stringify({ m: (permanent as Error).message, d: permanent })).not.toContain(
      's3cret',
    );
  });

  it('a feed that does not answer in time, or answers too much, fails that feed', async () => {
    const server = await stub({
      '/hang': stubReply.hang(),
      '/big': stubReply.xml(fixture('cryptodesk.rss.xml')),
    });
    const slow = await rejectionOf(
      new RssNewsProvider({
        feeds: [`${server.url}/hang`],
        timeoutMs: 200,
        maxBytes: 200_000,
      }).fetch(query()),
    );
    expect(slow).toMatchObject({
      retryable: true,
      details: { feeds: [{ reason: 'no answer within 200 ms' }] },
    });
    const big = await rejectionOf(
      new RssNewsProvider({
        feeds: [`${server.url}/big`],
        timeoutMs: 2_000,
        maxBytes: 1_000,
      }).fetch(query()),
    );
    expect(big).toMatchObject({ retryable: false });
    expect((big as Error).message).toMatch(/answer over 1000 bytes/);
  });

  it('an aborted step stops the requests and surfaces the abort, not a source error', async () => {
    const server = await stub({ '/hang': stubReply.hang() });
    const controller = new AbortController();
    const pending = new RssNewsProvider({ feeds: [`${server.url}/hang`], ...HTTP }).fetch(
      query({ signal: controller.signal }),
    );
    controller.abort(new Error('cancelled'));
    const error = await rejectionOf(pending);
    expect(error).not.toBeInstanceOf(NewsSourceError);
    expect((error as Error).message).toBe('cancelled');
  });
});

describe('GdeltNewsProvider (stored artlist answers on a local server)', () => {
  it('asks the window with start/end datetimes, newest first, and reads the articles', async () => {
    const server = await stub({ '/api/v2/doc/doc': stubReply.json(fixture('gdelt-artlist.json')) });
    const provider = new GdeltNewsProvider({ baseUrl: `${server.url}/api/v2/doc/doc`, ...HTTP });
    const batch = await provider.fetch(query());
    expect(batch.entries).toHaveLength(6);
    expect(batch.selectedByQuery).toBe(true);
    expect(batch.sources).toEqual([
      { kind: 'api', host: new URL(server.url).host, status: 'ok', fetched: 6 },
    ]);
    const asked = new URL(server.requests[0] ?? '', server.url).searchParams;
    expect(Object.fromEntries(asked)).toEqual({
      query: '(bitcoin OR btc)',
      mode: 'artlist',
      format: 'json',
      startdatetime: '20260917000000',
      enddatetime: '20260920000000',
      maxrecords: '80',
      sort: 'datedesc',
    });
  });

  it('query syntax: one term bare, a phrase quoted, short terms left out', () => {
    expect(gdeltQuery(['pepe'])).toBe('pepe');
    expect(gdeltQuery(['shiba inu', 'shib'])).toBe('("shiba inu" OR shib)');
    expect(() => gdeltQuery(['op'])).toThrow(/no search term of 3\+ characters/);
    expect(
      gdeltRequestUrl('https://api.gdeltproject.org/api/v2/doc/doc', query({ maxItems: 50 })),
    ).toContain('maxrecords=200');
  });

  it('5xx and 429 are retryable; 4xx, a text answer or garbage are not', async () => {
    const server = await stub({});
    const provider = new GdeltNewsProvider({ baseUrl: `${server.url}/doc`, ...HTTP });
    const cases: [ReturnType<typeof stubReply.status>, boolean, RegExp][] = [
      [stubReply.status(503), true, /HTTP 503/],
      [stubReply.text('Please limit requests to one every 5 seconds.', 429), true, /HTTP 429/],
      [stubReply.status(400), false, /HTTP 400/],
      [stubReply.text('The specified phrase is too short.'), false, /answered text, not JSON/],
      [stubReply.json('{"articles": 12}'), false, /not a list/],
    ];
    for (const [reply, retryable, message] of cases) {
      server.route('/doc', reply);
      const error = await rejectionOf(provider.fetch(query()));
      expect(error, String(message)).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable });
      expect((error as Error).message).toMatch(message);
    }
  });
});
