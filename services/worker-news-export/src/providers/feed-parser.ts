import { TdaError } from '@tda/contracts';
import { XMLParser } from 'fast-xml-parser';
import type { RawNewsEntry } from '../news-provider.port';

/**
 * RSS 2.0, RSS 1.0 (RDF) and Atom 1.0 documents → raw entries, with fast-xml-parser (no DTD or
 * external entity is fetched; its entity expansion limits are tightened further). Only metadata
 * is read: title, link, date, and the short description/summary — never `content:encoded` or
 * Atom `content`, the article bodies.
 */

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: { enabled: true, maxEntityCount: 20, maxTotalExpansions: 200 },
  htmlEntities: false,
  isArray: (name) => name === 'item' || name === 'entry' || name === 'link',
});

/** A document that is no feed: the source answered something unusable (not retryable). */
export class NotAFeedError extends TdaError {
  constructor(reason: string) {
    super('UPSTREAM_UNAVAILABLE', reason, { retryable: false });
  }
}

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of an element: a string, or the `#text` of one with attributes. */
function textOf(value: unknown): string | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (typeof first === 'string') return first;
  if (isNode(first) && typeof first['#text'] === 'string') return first['#text'];
  return undefined;
}

/** A date with an explicit zone (a zone-less one would be read in the machine's local time). */
const ZONED = /(?:Z|[+-]\d{2}:?\d{2}|\b(?:GMT|UTC?|[ECMP][SD]T))\s*$/i;

export function parseFeedDate(value: unknown): number | undefined {
  const text = textOf(value)?.trim();
  if (text === undefined || !ZONED.test(text)) return undefined;
  const time = Date.parse(text);
  return Number.isFinite(time) ? time : undefined;
}

/** An RSS item's link: `link`, else a `guid` that is a permalink (the default). */
function rssLink(item: Node): string | undefined {
  const link = textOf(item['link']);
  if (link !== undefined) return link;
  const guid = item['guid'];
  return isNode(guid) && guid['@_isPermaLink'] === 'false' ? undefined : textOf(guid);
}

function rssEntry(item: Node): RawNewsEntry {
  const entry: RawNewsEntry = {};
  const title = textOf(item['title']);
  if (title !== undefined) entry.title = title;
  const url = rssLink(item);
  if (url !== undefined) entry.url = url;
  const publishedAt = parseFeedDate(item['pubDate'] ?? item['dc:date']);
  if (publishedAt !== undefined) entry.publishedAt = publishedAt;
  const summary = textOf(item['description']);
  if (summary !== undefined) entry.summary = summary;
  return entry;
}

/** Atom: the `alternate` link (or one without rel), `published`, else `updated`. */
function atomEntry(node: Node): RawNewsEntry {
  const links = (Array.isArray(node['link']) ? node['link'] : []).filter(isNode);
  const alternate = links.find((l) => l['@_rel'] === undefined || l['@_rel'] === 'alternate');
  const entry: RawNewsEntry = {};
  const title = textOf(node['title']);
  if (title !== undefined) entry.title = title;
  if (typeof alternate?.['@_href'] === 'string') entry.url = alternate['@_href'];
  const publishedAt = parseFeedDate(node['published'] ?? node['updated']);
  if (publishedAt !== undefined) entry.publishedAt = publishedAt;
  const summary = textOf(node['summary']);
  if (summary !== undefined) entry.summary = summary;
  return entry;
}

function nodes(value: unknown): Node[] {
  return (Array.isArray(value) ? value : []).filter(isNode);
}

/** The entries of a feed document; a document that is no RSS or Atom feed is a NotAFeedError. */
export function parseFeed(xml: string): RawNewsEntry[] {
  let document: unknown;
  try {
    document = parser.parse(xml, true);
  } catch {
    throw new NotAFeedError('not well-formed XML');
  }
  if (!isNode(document)) throw new NotAFeedError('not an RSS or Atom feed');
  const rss = document['rss'];
  if (isNode(rss) && isNode(rss['channel'])) return nodes(rss['channel']['item']).map(rssEntry);
  const rdf = document['rdf:RDF'];
  if (isNode(rdf)) return nodes(rdf['item']).map(rssEntry);
  const feed = document['feed'];
  if (isNode(feed)) return nodes(feed['entry']).map(atomEntry);
  if (feed === '' || (isNode(rss) && rss['channel'] === '')) return [];
  throw new NotAFeedError('not an RSS or Atom feed');
}
