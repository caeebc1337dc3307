import type { NewsExportConfig } from './config';
import { NewsExportHandler } from './news-export.handler';
import type { NewsProvider } from './news-provider.port';
import { GdeltNewsProvider } from './providers/gdelt-news.provider';
import { hostOf } from './providers/http-get';
import { NoNewsProvider } from './providers/no-news.provider';
import { RssNewsProvider } from './providers/rss-news.provider';

export interface NewsExportOverrides {
  /** A ready provider instead of the one TDA_NEWS_PROVIDER selects (tests). */
  provider?: NewsProvider;
}

/** The provider TDA_NEWS_PROVIDER selects. */
export function createNewsProvider(config: NewsExportConfig): NewsProvider {
  const http = {
    timeoutMs: config.TDA_NEWS_TIMEOUT_MS,
    maxBytes: config.TDA_NEWS_MAX_RESPONSE_BYTES,
  };
  switch (config.TDA_NEWS_PROVIDER) {
    case 'rss':
      return new RssNewsProvider({ feeds: config.TDA_NEWS_FEEDS, ...http });
    case 'gdelt':
      return new GdeltNewsProvider({ baseUrl: config.TDA_NEWS_GDELT_URL, ...http });
    case 'none':
      return new NoNewsProvider();
  }
}

/** What service_started says about the provider: its name and hosts, never a URL or its query. */
export function newsSourcesSummary(config: NewsExportConfig): Record<string, unknown> {
  switch (config.TDA_NEWS_PROVIDER) {
    case 'rss':
      return { newsProvider: 'rss', newsFeedHosts: config.TDA_NEWS_FEEDS.map(hostOf) };
    case 'gdelt':
      return { newsProvider: 'gdelt', newsHost: hostOf(config.TDA_NEWS_GDELT_URL) };
    case 'none':
      return { newsProvider: 'none' };
  }
}

export function createNewsExportHandler(
  config: NewsExportConfig,
  overrides: NewsExportOverrides = {},
): NewsExportHandler {
  return new NewsExportHandler({ provider: overrides.provider ?? createNewsProvider(config) });
}
