import type { NewsBatch, NewsProvider } from '../news-provider.port';

/** TDA_NEWS_PROVIDER=none: no source is asked and nothing is returned — never invented news. */
export class NoNewsProvider implements NewsProvider {
  readonly name = 'none' as const;

  fetch(): Promise<NewsBatch> {
    return Promise.resolve({ entries: [], sources: [], selectedByQuery: false });
  }
}
