import { validate, type NewsExport } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from './step-type.descriptor';

/**
 * The largest NEWS_EXPORT artifact, in UTF-8 bytes of its JSON: well under seed 002's 64 KB per
 * JSON artifact an LLM step may read, whatever the item texts are (the worker drops the oldest
 * items until the artifact fits).
 */
export const NEWS_EXPORT_MAX_BYTES = 48 * 1024;

/** The artifact's bytes as the worker writes them (2-space indented JSON, a final newline). */
export function serializeNewsExport(news: NewsExport): Buffer {
  return Buffer.from(`${JSON.stringify(news, null, 2)}\n`, 'utf8');
}

const DROPPED_COUNTS = [
  'droppedAfterAsOf',
  'droppedBeforeWindow',
  'undated',
  'unmatched',
  'invalid',
  'duplicates',
  'overCap',
] as const;

function itemsProblem(news: NewsExport): string | undefined {
  const from = Date.parse(news.window.from);
  const to = Date.parse(news.window.to);
  const urls = new Set<string>();
  for (const [index, item] of news.items.entries()) {
    const at = Date.parse(item.publishedAt);
    if (at > to) return `items[${index}]: published after asOf ${news.asOf}`;
    if (at < from) return `items[${index}]: published before window.from ${news.window.from}`;
    if (urls.has(item.url)) return `items[${index}]: a second item with the same url`;
    urls.add(item.url);
    const previous = news.items[index - 1];
    if (previous === undefined) continue;
    const before = Date.parse(previous.publishedAt);
    if (before < at || (before === at && previous.url > item.url)) {
      return `items[${index}]: not sorted newest first (then by url)`;
    }
  }
  return undefined;
}

function countsProblem(news: NewsExport): string | undefined {
  const { counts } = news;
  if (counts.kept !== news.items.length) return 'counts.kept is not the number of items';
  const accounted = DROPPED_COUNTS.reduce((sum, key) => sum + counts[key], counts.kept);
  if (accounted !== counts.fetched) return 'counts.fetched is not kept + the dropped counts';
  const fromSources = news.sources.reduce((sum, source) => sum + source.fetched, 0);
  if (fromSources !== counts.fetched) return 'counts.fetched is not the sum of sources[].fetched';
  return undefined;
}

function providerProblem(news: NewsExport): string | undefined {
  if (news.provider === 'none') {
    if (news.items.length > 0 || news.sources.length > 0) {
      return 'provider none with items or sources: headlines are never invented';
    }
    return news.note === undefined ? 'provider none without a note saying so' : undefined;
  }
  if (!news.sources.some((source) => source.status === 'ok')) {
    return `provider ${news.provider} without a source that answered`;
  }
  if (news.sources.some((source) => source.kind !== (news.provider === 'rss' ? 'feed' : 'api'))) {
    return `provider ${news.provider} with a source of another kind`;
  }
  return undefined;
}

/**
 * What news_export.schema.json cannot say: the window ends at asOf and every item lies in it (no
 * item after asOf, the run's one moment); items newest first with unique links; the counts add
 * up; provider none holds nothing; and the artifact fits NEWS_EXPORT_MAX_BYTES.
 */
export function newsExportProblem(news: NewsExport): string | undefined {
  if (Date.parse(news.window.to) !== Date.parse(news.asOf)) return 'window.to is not asOf';
  if (Date.parse(news.window.from) >= Date.parse(news.window.to)) {
    return 'window.from is not before window.to';
  }
  const problem = itemsProblem(news) ?? countsProblem(news) ?? providerProblem(news);
  if (problem !== undefined) return problem;
  const bytes = serializeNewsExport(news).byteLength;
  return bytes > NEWS_EXPORT_MAX_BYTES
    ? `${bytes} bytes, over the ${NEWS_EXPORT_MAX_BYTES} bytes of a news artifact`
    : undefined;
}

/**
 * NEWS_EXPORT: headlines of the run's symbol in [asOf - lookbackHours, asOf] from the configured
 * provider (RSS/Atom feeds, the GDELT DOC 2.0 API, or none: zero items, said so), sanitized,
 * de-duplicated, newest first and capped. No upstream: it runs beside the reports, and an LLM step
 * reads its artifact as untrusted text.
 */
export const NEWS_EXPORT_STEP = defineStepType({
  stepType: 'NEWS_EXPORT',
  service: 'worker-news-export',
  description:
    'Headlines of the symbol in the lookback window cut at asOf, from RSS/Atom feeds or GDELT (or none): sanitized metadata and links, no article bodies.',
  inputsContract: 'news_export_inputs',
  inputs: validate.newsExportInputs,
  artifact: {
    contract: 'news_export',
    validate: validate.newsExport,
    identity: (a) => ({ runId: a.runId, stepId: a.stepId }),
    check: newsExportProblem,
  },
  upstream: {},
  // A few HTTP requests with a 10 s timeout each: a short step. Retries wait 5 s / 10 s because
  // GDELT asks for one request every 5 seconds (a 429 otherwise).
  policy: {
    ...DEFAULT_STEP_POLICY,
    timeoutMs: 60_000,
    retry: { tries: 3, baseDelayMs: 5_000, maxDelayMs: 10_000 },
  },
  deploy: {
    kind: 'Service',
    why:
      'NEWS_EXPORT steps take seconds (a few HTTP requests to public feeds or GDELT over the ' +
      'default internet egress): a request-driven Service fed by Pub/Sub push scales to zero; a ' +
      'failed request (5xx) is redelivered.',
    cpu: '1',
    memory: '512Mi',
    concurrency: 8,
    timeoutSeconds: 120,
    minInstances: 0,
    maxInstances: 3,
  },
});
