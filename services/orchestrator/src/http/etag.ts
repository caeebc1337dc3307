import { createHash } from 'node:crypto';

/** A strong ETag of a JSON body: the same body (same key order) gives the same tag. */
export function jsonEtag(body: unknown): string {
  const hash = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 32);
  return `"${hash}"`;
}

/**
 * Whether an If-None-Match header matches `etag` (RFC 9110 §13.1.2: a list of tags, weak
 * comparison, `*` matches any current representation).
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = (tag: string): string => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}
