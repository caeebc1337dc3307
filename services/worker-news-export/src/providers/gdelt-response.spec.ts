import { describe, expect, it } from 'vitest';
import { fixture } from '../testing/stub-news-server';
import { GdeltAnswerError, parseGdeltArtList, parseSeenDate } from './gdelt-response';

describe('parseGdeltArtList (DOC 2.0 mode=artlist format=json)', () => {
  it('reads title, url and seendate of each article', () => {
    const entries = parseGdeltArtList(fixture('gdelt-artlist.json'));
    expect(entries).toHaveLength(6);
    expect(entries[0]).toEqual({
      title: 'Bitcoin ETF inflows return as price tops $ 81 , 000',
      url: 'https://www.marketwire.example/crypto/bitcoin-etf-inflows-return-20260919?utm_source=gdelt&utm_medium=api',
      publishedAt: Date.parse('2026-09-19T21:30:00Z'),
    });
  });

  it('`{}` (nothing matched) and an empty body are zero articles', () => {
    expect(parseGdeltArtList('{}')).toEqual([]);
    expect(parseGdeltArtList('  ')).toEqual([]);
  });

  it('survives the invalid backslash escapes GDELT has been seen to send', () => {
    const text =
      '{"articles": [{"url": "https://a.example/x", "title": "Bitcoin \\x slides \\\'again\\\'", "seendate": "20260919T100000Z"}]}';
    expect(parseGdeltArtList(text)[0]?.title).toBe("Bitcoin x slides 'again'");
  });

  it('a text answer (a refused query) is an error quoting it; a rate limit one is retryable', () => {
    const refused = () => parseGdeltArtList('The specified phrase is too short.');
    expect(refused).toThrow(GdeltAnswerError);
    expect(refused).toThrow('answered text, not JSON: "The specified phrase is too short."');
    try {
      parseGdeltArtList(
        'Please limit requests to one every 5 seconds or contact kalev.leetaru5@gmail.com.',
      );
    } catch (error) {
      expect(error).toMatchObject({ retryable: true });
    }
    expect(() => parseGdeltArtList('{"articles": {}}')).toThrow('not a list');
    expect(() => parseGdeltArtList('{"articles": [')).toThrow('malformed JSON');
  });

  it('seendate is YYYYMMDDTHHMMSSZ, nothing else', () => {
    expect(parseSeenDate('20260919T213000Z')).toBe(Date.parse('2026-09-19T21:30:00Z'));
    for (const bad of [
      '20260231T000000Z',
      '2026-09-19T21:30:00Z',
      '20260919T250000Z',
      20260919,
      undefined,
    ]) {
      expect(parseSeenDate(bad), String(bad)).toBeUndefined();
    }
  });
});
