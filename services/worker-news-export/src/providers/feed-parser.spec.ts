import { describe, expect, it } from 'vitest';
import { fixture } from '../testing/stub-news-server';
import { NotAFeedError, parseFeed, parseFeedDate } from './feed-parser';

describe('parseFeed', () => {
  it('RSS 2.0: title, link (or permalink guid), pubDate and description; never content:encoded', () => {
    const entries = parseFeed(fixture('cryptodesk.rss.xml'));
    expect(entries).toHaveLength(14);
    expect(entries[2]).toEqual({
      title: 'Bitcoin Tops $81K as ETF Inflows Return',
      url: 'https://www.cryptodesk.example/markets/2026/09/19/bitcoin-tops-81k-as-etf-inflows-return?utm_source=rss&utm_medium=feed&utm_campaign=headlines',
      publishedAt: Date.parse('2026-09-19T21:15:00Z'),
      summary: expect.stringContaining('<strong>$412&nbsp;million</strong>') as string,
    });
    expect(JSON.stringify(entries)).not.toContain('FULL ARTICLE BODY');
    const hashrate = entries.find((e) => e.title?.startsWith("Bitcoin's Hashrate"));
    expect(hashrate?.url).toBe(
      'https://www.cryptodesk.example/tech/2026/09/17/bitcoins-hashrate-sets-a-record',
    );
    // A zone-less date and a missing one are not dates.
    expect(
      entries.find((e) => e.title === 'Bitcoin Options Expiry Looms')?.publishedAt,
    ).toBeUndefined();
    expect(
      entries.find((e) => e.title === 'Bitcoin Dominance Hits 60%')?.publishedAt,
    ).toBeUndefined();
  });

  it('Atom: the alternate link, published else updated, summary; never content', () => {
    const entries = parseFeed(fixture('chainwire.atom.xml'));
    expect(entries).toHaveLength(6);
    expect(entries[1]).toEqual({
      title: 'Ether Slips While Bitcoin Holds Steady',
      url: 'https://blog.chainwire.example/2026/09/ether-slips?utm_campaign=daily&ref=feed',
      publishedAt: Date.parse('2026-09-18T18:05:00Z'),
      summary: "<p>The same story as another feed's, a few minutes later.</p>",
    });
    expect(entries[2]).toMatchObject({
      title: 'Bitcoin &amp; Gold: A <em>Correlation</em> Check',
      publishedAt: Date.parse('2026-09-18T07:00:00Z'),
    });
    expect(JSON.stringify(entries)).not.toContain('FULL ARTICLE BODY');
  });

  it('RSS 1.0 (RDF) with dc:date, and empty feeds', () => {
    const rdf = `<?xml version="1.0"?>
      <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
        <channel rdf:about="https://r.example/"><title>R</title></channel>
        <item rdf:about="https://r.example/1"><title>Bitcoin one</title><link>https://r.example/1</link><dc:date>2026-09-19T10:00:00+00:00</dc:date></item>
      </rdf:RDF>`;
    expect(parseFeed(rdf)).toEqual([
      {
        title: 'Bitcoin one',
        url: 'https://r.example/1',
        publishedAt: Date.parse('2026-09-19T10:00:00Z'),
      },
    ]);
    expect(parseFeed('<rss version="2.0"><channel></channel></rss>')).toEqual([]);
    expect(parseFeed('<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title></feed>')).toEqual(
      [],
    );
  });

  it('anything else is NotAFeedError', () => {
    for (const text of [
      '<html><body>Blocked</body></html>',
      '{"articles": []}',
      '<rss><channel>',
      '',
    ]) {
      expect(() => parseFeed(text), text).toThrow(NotAFeedError);
    }
  });

  it('entity bombs: nested entities are not expanded, and over 200 expansions refuse the feed', () => {
    const doctype = `<!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>`;
    const rss = (title: string) =>
      `<?xml version="1.0"?>${doctype}<rss version="2.0"><channel><item><title>${title}</title></item></channel></rss>`;
    const [nested] = parseFeed(rss('&b;'.repeat(150)));
    expect(nested?.title).not.toContain('aaaaaaaaaa');
    expect(() => parseFeed(rss('&a;'.repeat(300)))).toThrow(NotAFeedError);
  });

  it('feed dates need an explicit zone', () => {
    expect(parseFeedDate('Fri, 18 Sep 2026 08:30:00 GMT')).toBe(Date.parse('2026-09-18T08:30:00Z'));
    expect(parseFeedDate('Sat, 19 Sep 2026 12:00:00 +0200')).toBe(
      Date.parse('2026-09-19T10:00:00Z'),
    );
    expect(parseFeedDate('2026-09-18T09:00:00+02:00')).toBe(Date.parse('2026-09-18T07:00:00Z'));
    expect(parseFeedDate('2026-09-19 09:00:00')).toBeUndefined();
    expect(parseFeedDate('yesterday GMT')).toBeUndefined();
  });
});
