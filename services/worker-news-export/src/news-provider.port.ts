/**
 * Where headlines come from (the NEWS_EXPORT worker's port). An adapter fetches and parses; the
 * handler owns everything after (sanitizing, the asOf cut, matching, de-duplication, order, caps),
 * so every provider's entries go through the same rules.
 */

export type NewsProviderName = 'rss' | 'gdelt' | 'none';

export interface NewsQuery {
  /** Lower case search terms (asset names, then the ticker). */
  terms: readonly string[];
  /** The window, epoch ms: from <= publishedAt <= to (to = the run's asOf). */
  from: number;
  to: number;
  /** How many entries the step keeps at most (a provider may ask for more, to filter after). */
  maxItems: number;
  signal: AbortSignal;
}

/** One entry as the source gave it (raw text: markup and tracking links still in). */
export interface RawNewsEntry {
  title?: string;
  url?: string;
  /** Epoch ms; undefined when the source gave no usable date. */
  publishedAt?: number;
  summary?: string;
}

/** One source asked (a feed, the API) and how it answered; `host` only, never a full URL. */
export interface NewsSourceReport {
  kind: 'feed' | 'api';
  host: string;
  status: 'ok' | 'failed';
  fetched: number;
  error?: string;
}

export interface NewsBatch {
  entries: RawNewsEntry[];
  sources: NewsSourceReport[];
  /**
   * true: the source selected the entries by the terms itself (GDELT's full-text search), so the
   * handler does not require a term in the title or summary; false: a general feed, it does.
   */
  selectedByQuery: boolean;
}

export interface NewsProvider {
  readonly name: NewsProviderName;
  /** Throws a StepError (UPSTREAM_UNAVAILABLE, retryable when transient) when nothing answered. */
  fetch(query: NewsQuery): Promise<NewsBatch>;
}
