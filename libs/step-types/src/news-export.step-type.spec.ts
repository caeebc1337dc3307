import type { NewsExport } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import {
  NEWS_EXPORT_MAX_BYTES,
  NEWS_EXPORT_STEP,
  newsExportProblem,
} from './news-export.step-type';

const example = (name = 'news_export.example.json'): NewsExport => loadExample(name) as NewsExport;

function item(news: NewsExport, index: number) {
  const found = news.items[index];
  if (found === undefined) throw new Error(`the example has no items[${index}]`);
  return found;
}

describe('NEWS_EXPORT_STEP artifact check', () => {
  it('accepts the examples (feeds, and provider none)', () => {
    for (const name of ['news_export.example.json', 'news_export.none.example.json']) {
      const news = example(name);
      expect(NEWS_EXPORT_STEP.artifact.validate(news).ok, name).toBe(true);
      expect(newsExportProblem(news), name).toBeUndefined();
    }
    expect(NEWS_EXPORT_STEP.artifact.identity(example())).toEqual({
      runId: example().runId,
      stepId: 'news_export',
    });
  });

  it.each([
    [
      'an item after asOf',
      (n: NewsExport) => (item(n, 0).publishedAt = '2026-09-20T00:00:01Z'),
      /published after asOf/,
    ],
    [
      'an item before the window',
      (n: NewsExport) => (item(n, 8).publishedAt = '2026-09-16T23:59:59Z'),
      /before window.from/,
    ],
    [
      'a window that does not end at asOf',
      (n: NewsExport) => (n.window.to = '2026-09-21T00:00:00Z'),
      /window.to is not asOf/,
    ],
    ['items out of order', (n: NewsExport) => n.items.reverse(), /not sorted newest first/],
    ['a repeated url', (n: NewsExport) => (item(n, 1).url = item(n, 0).url), /same url/],
    ['kept that is not the item count', (n: NewsExport) => n.items.pop(), /counts.kept/],
    [
      'counts that do not add up',
      (n: NewsExport) => (n.counts.unmatched += 1),
      /counts.fetched is not kept/,
    ],
    [
      'sources that do not add up',
      (n: NewsExport) => {
        n.counts.fetched += 1;
        n.counts.invalid += 1;
      },
      /sum of sources/,
    ],
    [
      'no source that answered',
      (n: NewsExport) => n.sources.forEach((s) => (s.status = 'failed')),
      /without a source that answered/,
    ],
    [
      'an api source for feeds',
      (n: NewsExport) => ((n.sources[0] ?? { kind: '' }).kind = 'api'),
      /another kind/,
    ],
  ])('refuses %s', (_, mutate, problem) => {
    const news = example();
    mutate(news);
    expect(newsExportProblem(news)).toMatch(problem);
  });

  it('provider none holds nothing and says so: headlines are never invented', () => {
    const invented = example('news_export.none.example.json');
    invented.items.push({ ...item(example(), 0) });
    invented.counts = { ...invented.counts, fetched: 1, kept: 1 };
    expect(newsExportProblem(invented)).toMatch(/never invented|sum of sources/);
    const silent = example('news_export.none.example.json');
    delete silent.note;
    expect(newsExportProblem(silent)).toMatch(/without a note/);
  });

  it('refuses an artifact over its byte budget', () => {
    const news = example();
    news.items = Array.from({ length: 50 }, (_, i) => ({
      ...item(news, 0),
      url: `https://news.example/${'x'.repeat(300)}/${String(i).padStart(2, '0')}`,
      title: '新闻'.repeat(90),
      summary: '€'.repeat(240),
    }));
    const zero = { droppedAfterAsOf: 0, droppedBeforeWindow: 0, undated: 0, unmatched: 0 };
    news.counts = { ...zero, fetched: 50, kept: 50, invalid: 0, duplicates: 0, overCap: 0 };
    news.sources = [{ kind: 'feed', host: 'news.example', status: 'ok', fetched: 50 }];
    expect(newsExportProblem(news)).toMatch(new RegExp(`over the ${NEWS_EXPORT_MAX_BYTES} bytes`));
    news.items = news.items.slice(0, 10);
    news.counts = { ...news.counts, kept: 10, overCap: 40 };
    expect(newsExportProblem(news)).toBeUndefined();
  });
});
