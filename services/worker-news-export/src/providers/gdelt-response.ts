import { TdaError } from '@tda/contracts';
import type { RawNewsEntry } from '../news-provider.port';

/**
 * The GDELT DOC 2.0 API's `mode=artlist&format=json` answer: `{"articles": [{url, url_mobile,
 * title, seendate: "20260919T211500Z", socialimage, domain, language, sourcecountry}]}`, or `{}`
 * when nothing matched. A query GDELT refuses is answered with a plain-text sentence (status 200),
 * and its JSON has been seen with invalid backslash escapes in titles.
 */

/** An answer that is no artlist; retryable only for a rate-limit sentence (asking later helps). */
export class GdeltAnswerError extends TdaError {
  constructor(reason: string, retryable = false) {
    super('UPSTREAM_UNAVAILABLE', reason, { retryable });
  }
}

const SEENDATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** `20260919T211500Z` → epoch ms; undefined for anything else (an impossible date included). */
export function parseSeenDate(value: unknown): number | undefined {
  const match = typeof value === 'string' ? SEENDATE.exec(value) : null;
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const time = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(time);
  return date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour < 24 &&
    minute < 60 &&
    second < 60
    ? time
    : undefined;
}

/** JSON.parse, once more with invalid escapes (`\x`, `\'`) and raw control characters dropped. */
function parseLenient(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const repaired = text.replace(/\\(?!["\\/bfnrtu])/g, '').replace(/\p{Cc}/gu, ' ');
    return JSON.parse(repaired);
  }
}

/** A short printable excerpt of a text answer, for the error (GDELT's sentence, never a URL). */
function excerpt(text: string): string {
  const printable = text
    .replace(/https?:\/\/\S+/g, '<url>')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return printable.length <= 100 ? printable : `${printable.slice(0, 99)}…`;
}

function entryOf(article: unknown): RawNewsEntry {
  if (typeof article !== 'object' || article === null) return {};
  const { title, url, seendate } = article as Record<string, unknown>;
  const entry: RawNewsEntry = {};
  if (typeof title === 'string') entry.title = title;
  if (typeof url === 'string') entry.url = url;
  const publishedAt = parseSeenDate(seendate);
  if (publishedAt !== undefined) entry.publishedAt = publishedAt;
  return entry;
}

/** The entries of an artlist answer; GdeltAnswerError for a text answer or another shape. */
export function parseGdeltArtList(text: string): RawNewsEntry[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (!trimmed.startsWith('{')) {
    throw new GdeltAnswerError(
      `answered text, not JSON: "${excerpt(trimmed)}"`,
      /limit requests/i.test(trimmed),
    );
  }
  let document: unknown;
  try {
    document = parseLenient(trimmed);
  } catch {
    throw new GdeltAnswerError('answered malformed JSON');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new GdeltAnswerError('answered JSON that is not an object');
  }
  const { articles } = document as { articles?: unknown };
  if (articles === undefined) return [];
  if (!Array.isArray(articles)) throw new GdeltAnswerError('answered articles that are not a list');
  return articles.map(entryOf);
}
