import { describe, expect, it } from 'vitest';
import {
  canonicalUrl,
  capText,
  cleanText,
  plainText,
  sourceOf,
  titleKey,
  URL_MAX,
} from './news-text';

describe('plainText', () => {
  it('drops tags (script and style with their content), decodes entities, collapses whitespace', () => {
    expect(
      plainText(
        '<p>Spot <a href="x">bitcoin</a>&nbsp;ETFs &amp; <strong>more</strong></p>\n\n<script>steal()</script><style>p{}</style>',
      ),
    ).toBe('Spot bitcoin ETFs & more');
    expect(plainText('traders&#8217; &#x2014; &hellip; &unknown; end')).toBe('traders’ — … end');
  });

  it('leaves no markup from HTML escaped twice, and no comment', () => {
    expect(
      plainText(
        '&lt;p&gt;Hello &lt;iframe src="https://evil.example"&gt;&lt;/iframe&gt;world&lt;/p&gt;',
      ),
    ).toBe('Hello world');
    expect(plainText('&amp;lt;b&amp;gt;bold&amp;lt;/b&amp;gt; <!-- hidden -->text')).toBe(
      'bold text',
    );
  });

  it('drops control, bidi and zero-width characters and stray angle brackets', () => {
    expect(plainText('a\u0000b\u202Ec\u200Bd\u2028e < f')).toBe('a b c d e f');
  });
});

describe('capText and cleanText', () => {
  it('cuts at a word near the limit, with an ellipsis, counting code points', () => {
    expect(capText('short', 10)).toBe('short');
    expect(capText('alpha beta gamma delta', 15)).toBe('alpha beta…');
    expect(capText('abcdefghijklmnop', 6)).toBe('abcde…');
    expect(Array.from(capText('😀'.repeat(20), 10))).toHaveLength(10);
  });

  it('is undefined when nothing is left', () => {
    expect(cleanText('<p> </p>', 50)).toBeUndefined();
    expect(cleanText(undefined, 50)).toBeUndefined();
  });
});

describe('canonicalUrl', () => {
  it('drops tracking parameters and the fragment, keeps the others in order', () => {
    expect(
      canonicalUrl(
        'https://Site.Example./a/b?utm_source=rss&id=4&fbclid=x&gclid=y&mc_cid=z&page=2#top',
      ),
    ).toBe('https://site.example/a/b?id=4&page=2');
    expect(canonicalUrl('https://site.example/a?utm_medium=feed')).toBe('https://site.example/a');
    expect(canonicalUrl('https://site.example/a?q=a%20b')).toBe('https://site.example/a?q=a%20b');
  });

  it('refuses what is not an http(s) link to keep', () => {
    for (const raw of [
      'javascript:alert(1)',
      'data:text/html,<b>x</b>',
      'ftp://site.example/file',
      'https://user:pass@site.example/a',
      'not a url',
      `https://site.example/${'a'.repeat(URL_MAX)}`,
    ]) {
      expect(canonicalUrl(raw), raw).toBeUndefined();
    }
  });

  it('names the source by host without www.', () => {
    expect(sourceOf('https://www.cryptodesk.example/x')).toBe('cryptodesk.example');
    expect(titleKey('Bitcoin  Tops $81K — as ETF Inflows Return!')).toBe(
      'bitcoin tops 81k as etf inflows return',
    );
  });
});
