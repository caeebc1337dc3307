import type { NewsExport, NewsSource } from '@tda/contracts';
import { NEWS_EXPORT_MAX_BYTES, NEWS_EXPORT_STEP, serializeNewsExport } from '@tda/step-types';
import {
  StepInputError,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';
import { searchTermsOf, type SearchTerms } from './asset-terms';
import type { NewsBatch, NewsProvider } from './news-provider.port';
import { isoTime, selectNews, type Selection } from './news-selection';

type Context = StepContext<typeof NEWS_EXPORT_STEP>;

const HOUR_MS = 3_600_000;
export const DEFAULT_LOOKBACK_HOURS = 72;
export const DEFAULT_MAX_ITEMS = 20;

export const NO_PROVIDER_NOTE =
  'No news provider is configured (TDA_NEWS_PROVIDER=none): zero headlines, none invented.';

export interface NewsExportHandlerOptions {
  provider: NewsProvider;
}

interface Window {
  from: number;
  to: number;
}

/**
 * NEWS_EXPORT: the headlines of the run's symbol published in [asOf - lookbackHours, asOf], from
 * the configured provider, through the same rules for every provider (`selectNews`), in an
 * artifact that names the provider and every source asked. The bytes depend only on the
 * provider's answers (no wall-clock time, fixed key order); nothing published after asOf is kept.
 */
export class NewsExportHandler implements StepHandler<typeof NEWS_EXPORT_STEP> {
  readonly descriptor = NEWS_EXPORT_STEP;

  constructor(private readonly options: NewsExportHandlerOptions) {}

  async execute(context: Context): Promise<StepResult> {
    const { run, stepId, inputs, signal } = context;
    const symbol = inputs.symbol ?? run.scope.symbol;
    const window = windowOf(context);
    const search = searchTermsOf(symbol);
    const maxItems = inputs.maxItems ?? DEFAULT_MAX_ITEMS;
    const { provider } = this.options;
    context.heartbeat({ stage: 'fetch_news' });
    const batch = await provider.fetch({ terms: search.terms, ...window, maxItems, signal });
    signal.throwIfAborted();
    const selection = selectNews(batch.entries, {
      ...window,
      terms: search.terms,
      requireTerm: !batch.selectedByQuery,
      maxItems,
    });
    const news = fitToBudget(
      buildNewsExport({
        runId: run.runId,
        stepId,
        symbol,
        window,
        search,
        batch,
        selection,
        provider,
      }),
    );
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serializeNewsExport(news), contentType: 'application/json' }],
      primaryUri: uri,
      execution: { news: executionSummary(news) },
    };
  }
}

/** [asOf - lookbackHours, asOf]; a run without scope.asOf has no moment to cut news at. */
function windowOf(context: Context): Window {
  const { asOf } = context.run.scope;
  if (asOf === undefined) {
    throw new StepInputError('NEWS_EXPORT needs the run’s scope.asOf (the moment to cut news at)', {
      field: 'scope.asOf',
    });
  }
  const to = Date.parse(asOf);
  const hours = context.inputs.lookbackHours ?? DEFAULT_LOOKBACK_HOURS;
  return { from: to - hours * HOUR_MS, to };
}

function noteOf(
  provider: NewsProvider,
  sources: readonly NewsSource[],
  kept: number,
): string | undefined {
  if (provider.name === 'none') return NO_PROVIDER_NOTE;
  const failed = sources.filter((s) => s.status === 'failed').length;
  if (failed > 0) {
    return `${failed} of ${sources.length} sources did not answer; the headlines are from the others.`;
  }
  return kept === 0 ? 'No headline of the symbol was published in the window.' : undefined;
}

function buildNewsExport(parts: {
  runId: string;
  stepId: string;
  symbol: string;
  window: Window;
  search: SearchTerms;
  batch: NewsBatch;
  selection: Selection;
  provider: NewsProvider;
}): NewsExport {
  const { batch, selection, window, provider } = parts;
  const note = noteOf(provider, batch.sources, selection.items.length);
  return {
    schemaVersion: 1,
    runId: parts.runId,
    stepId: parts.stepId,
    symbol: parts.symbol,
    asOf: isoTime(window.to),
    window: { from: isoTime(window.from), to: isoTime(window.to) },
    provider: provider.name,
    ...(note === undefined ? {} : { note }),
    query: { baseAsset: parts.search.baseAsset, terms: parts.search.terms },
    sources: batch.sources.map((s) => ({ ...s })),
    items: selection.items,
    counts: selection.counts,
  };
}

/**
 * The artifact within NEWS_EXPORT_MAX_BYTES: the oldest items go first (counted overCap). The
 * caps on items and text lengths keep ASCII headlines far below it; long non-Latin texts (up to
 * 4 bytes a character) may not be.
 */
function fitToBudget(news: NewsExport): NewsExport {
  const items = [...news.items];
  let dropped = 0;
  const sized = (): NewsExport => ({
    ...news,
    items,
    counts: { ...news.counts, kept: items.length, overCap: news.counts.overCap + dropped },
  });
  while (items.length > 0 && serializeNewsExport(sized()).byteLength > NEWS_EXPORT_MAX_BYTES) {
    items.pop();
    dropped += 1;
  }
  return sized();
}

/** outputs.execution.news: provider and counts (no headline text). */
function executionSummary(news: NewsExport): Record<string, unknown> {
  return {
    provider: news.provider,
    symbol: news.symbol,
    asOf: news.asOf,
    items: news.items.length,
    fetched: news.counts.fetched,
    droppedAfterAsOf: news.counts.droppedAfterAsOf,
    sources: news.sources.length,
    failedSources: news.sources.filter((s) => s.status === 'failed').length,
  };
}
