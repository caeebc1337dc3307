import { StepInputError } from '@tda/worker-kit';
import type { NewsBatch, NewsProvider, NewsQuery } from '../news-provider.port';
import { hostOf, httpGetText, NewsSourceError } from './http-get';
import { GdeltAnswerError, parseGdeltArtList } from './gdelt-response';

/** The DOC 2.0 API endpoint (no key). Tests point TDA_NEWS_GDELT_URL at a local stub. */
export const GDELT_DOC_API = 'https://api.gdeltproject.org/api/v2/doc/doc';

/** GDELT refuses keywords shorter than this. */
const MIN_KEYWORD = 3;
/** GDELT's artlist maximum. */
const MAX_RECORDS = 250;

export interface GdeltNewsProviderOptions {
  baseUrl: string;
  timeoutMs: number;
  maxBytes: number;
}

/** `20260920T000000` style UTC: the API's STARTDATETIME / ENDDATETIME (YYYYMMDDHHMMSS). */
export function gdeltDateTime(time: number): string {
  return new Date(time).toISOString().slice(0, 19).replace(/[-:T]/g, '');
}

/**
 * The query: the terms of 3+ characters, a phrase quoted, several OR'ed inside parentheses (GDELT
 * allows parentheses only around OR'ed terms). No term GDELT accepts is the run's mistake.
 */
export function gdeltQuery(terms: readonly string[]): string {
  const keywords = terms
    .filter((term) => term.length >= MIN_KEYWORD)
    .map((term) => (term.includes(' ') ? `"${term}"` : term));
  if (keywords.length === 0) {
    throw new StepInputError(
      `no search term of ${MIN_KEYWORD}+ characters for GDELT (terms: ${terms.join(', ')})`,
      { field: 'symbol' },
    );
  }
  return keywords.length === 1 ? (keywords[0] ?? '') : `(${keywords.join(' OR ')})`;
}

/** The artlist request of a query: the window is the API's start/end datetimes, newest first. */
export function gdeltRequestUrl(baseUrl: string, query: NewsQuery): string {
  const url = new URL(baseUrl);
  const params: [string, string][] = [
    ['query', gdeltQuery(query.terms)],
    ['mode', 'artlist'],
    ['format', 'json'],
    ['startdatetime', gdeltDateTime(query.from)],
    ['enddatetime', gdeltDateTime(query.to)],
    ['maxrecords', String(Math.min(MAX_RECORDS, Math.max(50, query.maxItems * 4)))],
    ['sort', 'datedesc'],
  ];
  for (const [name, value] of params) url.searchParams.set(name, value);
  return url.toString();
}

/**
 * GDELT DOC 2.0 (https://blog.gdeltproject.org/gdelt-doc-2-0-api-debuts/): a full-text search of
 * world news by keyword with an absolute start/end datetime, so a run with a historical asOf gets
 * that window's headlines. `seendate` (when GDELT first saw the article) is the publication time.
 */
export class GdeltNewsProvider implements NewsProvider {
  readonly name = 'gdelt' as const;

  constructor(private readonly options: GdeltNewsProviderOptions) {}

  async fetch(query: NewsQuery): Promise<NewsBatch> {
    const host = hostOf(this.options.baseUrl).replace(/[^a-z0-9.:-]/g, '');
    const text = await httpGetText(gdeltRequestUrl(this.options.baseUrl, query), {
      label: 'gdelt',
      timeoutMs: this.options.timeoutMs,
      maxBytes: this.options.maxBytes,
      accept: 'application/json',
      signal: query.signal,
    });
    let entries;
    try {
      entries = parseGdeltArtList(text);
    } catch (error) {
      if (error instanceof GdeltAnswerError) {
        throw new NewsSourceError('gdelt', host, error.message, error.retryable);
      }
      throw error;
    }
    return {
      entries,
      sources: [{ kind: 'api', host, status: 'ok', fetched: entries.length }],
      selectedByQuery: true,
    };
  }
}
