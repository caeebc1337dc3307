import { StepError } from '@tda/worker-kit';
import type {
  NewsBatch,
  NewsProvider,
  NewsQuery,
  NewsSourceReport,
  RawNewsEntry,
} from '../news-provider.port';
import { NotAFeedError, parseFeed } from './feed-parser';
import { hostOf, httpGetText, NewsSourceError } from './http-get';

export interface RssNewsProviderOptions {
  /** The configured feeds (TDA_NEWS_FEEDS): http(s) URLs of RSS 2.0, RSS 1.0 or Atom documents. */
  feeds: readonly string[];
  timeoutMs: number;
  maxBytes: number;
}

type FeedResult =
  | { ok: true; host: string; entries: RawNewsEntry[] }
  | { ok: false; host: string; error: NewsSourceError };

/** Artifact-safe host: what the contract's pattern allows (an IPv6 literal loses its brackets). */
function safeHost(url: string): string {
  return hostOf(url).replace(/[^a-z0-9.:-]/g, '');
}

/**
 * RSS/Atom feeds, all asked at once. A feed that fails is reported (host and reason) and the
 * others' entries are used: one dead feed does not fail the step. Only when no feed answered does
 * the step fail, retryable when any of the failures was transient.
 */
export class RssNewsProvider implements NewsProvider {
  readonly name = 'rss' as const;

  constructor(private readonly options: RssNewsProviderOptions) {
    if (options.feeds.length === 0) throw new Error('RssNewsProvider needs at least one feed');
  }

  async fetch(query: NewsQuery): Promise<NewsBatch> {
    const results = await Promise.all(
      this.options.feeds.map((feed) => this.fetchFeed(feed, query)),
    );
    query.signal.throwIfAborted();
    const sources = results.map(sourceReport);
    const failures = results.filter((r): r is Extract<FeedResult, { ok: false }> => !r.ok);
    if (failures.length === results.length) throw noFeedAnswered(failures);
    const entries = results.flatMap((r) => (r.ok ? r.entries : []));
    return { entries, sources, selectedByQuery: false };
  }

  private async fetchFeed(feed: string, query: NewsQuery): Promise<FeedResult> {
    const host = safeHost(feed);
    try {
      const xml = await httpGetText(feed, {
        label: 'feed',
        timeoutMs: this.options.timeoutMs,
        maxBytes: this.options.maxBytes,
        accept: 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9',
        signal: query.signal,
      });
      return { ok: true, host, entries: parseFeed(xml) };
    } catch (error) {
      query.signal.throwIfAborted();
      if (error instanceof NewsSourceError) return { ok: false, host, error };
      if (error instanceof NotAFeedError) {
        return { ok: false, host, error: new NewsSourceError('feed', host, error.message, false) };
      }
      throw error;
    }
  }
}

function sourceReport(result: FeedResult): NewsSourceReport {
  return result.ok
    ? { kind: 'feed', host: result.host, status: 'ok', fetched: result.entries.length }
    : { kind: 'feed', host: result.host, status: 'failed', fetched: 0, error: result.error.reason };
}

function noFeedAnswered(failures: readonly { host: string; error: NewsSourceError }[]): StepError {
  const retryable = failures.some((f) => f.error.retryable);
  const reasons = failures.map((f) => `${f.host}: ${f.error.reason}`);
  return new StepError(
    'UPSTREAM_UNAVAILABLE',
    `no news feed answered (${failures.length}): ${reasons.join('; ')}`,
    {
      retryable,
      details: {
        source: 'feed',
        feeds: failures.map((f) => ({ host: f.host, reason: f.error.reason })),
      },
    },
  );
}
