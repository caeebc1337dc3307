import type { NewsCounts, NewsItem } from '@tda/contracts';
import { mentionsAny } from './asset-terms';
import type { RawNewsEntry } from './news-provider.port';
import {
  canonicalUrl,
  cleanText,
  plainText,
  sourceOf,
  SUMMARY_MAX,
  TITLE_MAX,
  titleKey,
} from './news-text';

export interface SelectionOptions {
  /** The window, epoch ms: from <= publishedAt <= to; to is the run's asOf. */
  from: number;
  to: number;
  terms: readonly string[];
  /** A feed entry must mention a term (title or summary); GDELT's were selected by its search. */
  requireTerm: boolean;
  maxItems: number;
}

export interface Selection {
  items: NewsItem[];
  counts: NewsCounts;
}

interface Candidate {
  item: NewsItem;
  time: number;
}

type Drop = Exclude<keyof NewsCounts, 'fetched' | 'kept' | 'duplicates' | 'overCap'>;

/** ISO-8601 UTC, without milliseconds when they are zero (as every TDA timestamp). */
export function isoTime(time: number): string {
  return new Date(time).toISOString().replace('.000Z', 'Z');
}

/** One raw entry → a candidate item, or the count it is dropped under. */
function candidateOf(entry: RawNewsEntry, options: SelectionOptions): Candidate | Drop {
  const title = cleanText(entry.title, TITLE_MAX);
  const url = canonicalUrl(entry.url);
  if (title === undefined || url === undefined) return 'invalid';
  const time = entry.publishedAt;
  if (time === undefined || !Number.isFinite(time)) return 'undated';
  if (time > options.to) return 'droppedAfterAsOf';
  if (time < options.from) return 'droppedBeforeWindow';
  const fullSummary = entry.summary === undefined ? undefined : plainText(entry.summary);
  if (
    options.requireTerm &&
    !mentionsAny(options.terms, plainText(entry.title ?? ''), fullSummary)
  ) {
    return 'unmatched';
  }
  const summary = cleanText(entry.summary, SUMMARY_MAX);
  const item: NewsItem = { title, url, source: sourceOf(url), publishedAt: isoTime(time) };
  // A summary that only repeats the title adds nothing.
  if (summary !== undefined && titleKey(summary) !== titleKey(title)) item.summary = summary;
  return { item, time };
}

/** Newest first; the same time ordered by url, so the order never depends on the source's. */
function newestFirst(a: Candidate, b: Candidate): number {
  if (a.time !== b.time) return b.time - a.time;
  return a.item.url < b.item.url ? -1 : a.item.url > b.item.url ? 1 : 0;
}

/**
 * The rules every provider's entries go through, in order: a title and a usable link (sanitized),
 * a date, the window (nothing after asOf), the terms (feeds), newest first, one item per canonical
 * link and per normalized title (the newest copy stays), at most maxItems. Every entry is counted
 * once: fetched = kept + the dropped counts.
 */
export function selectNews(entries: readonly RawNewsEntry[], options: SelectionOptions): Selection {
  const counts: NewsCounts = {
    fetched: entries.length,
    kept: 0,
    droppedAfterAsOf: 0,
    droppedBeforeWindow: 0,
    undated: 0,
    unmatched: 0,
    invalid: 0,
    duplicates: 0,
    overCap: 0,
  };
  const candidates: Candidate[] = [];
  for (const entry of entries) {
    const candidate = candidateOf(entry, options);
    if (typeof candidate === 'string') counts[candidate] += 1;
    else candidates.push(candidate);
  }
  const urls = new Set<string>();
  const titles = new Set<string>();
  const items: NewsItem[] = [];
  for (const { item } of candidates.sort(newestFirst)) {
    const key = titleKey(item.title);
    if (urls.has(item.url) || titles.has(key)) {
      counts.duplicates += 1;
    } else if (items.length >= options.maxItems) {
      counts.overCap += 1;
    } else {
      items.push(item);
    }
    urls.add(item.url);
    titles.add(key);
  }
  counts.kept = items.length;
  return { items, counts };
}
