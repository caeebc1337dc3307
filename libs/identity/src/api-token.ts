import { createHash, randomBytes } from 'node:crypto';

/** Every TDA API token starts with this, so scanners and humans recognise a leaked one. */
export const API_TOKEN_PREFIX = 'tda_';
const TOKEN_PATTERN = /^tda_[A-Za-z0-9_-]{43}$/;
/** contracts api_token tokenId. */
export const TOKEN_ID_PATTERN = /^tok_[0-9a-f]{16}$/;

/** A freshly issued token: `token` is shown once and never stored; `hash` is the document id. */
export interface IssuedApiToken {
  token: string;
  hash: string;
  tokenId: string;
}

/** sha256 hex of the token: what is stored and looked up (a read of the store leaks no token). */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The public id of a token (lists, revoke, audit logs): a prefix of its hash. */
export function tokenIdOf(hash: string): string {
  return `tok_${hash.slice(0, 16)}`;
}

export function isApiTokenFormat(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

export function isTokenId(value: string): boolean {
  return TOKEN_ID_PATTERN.test(value);
}

/** 256 random bits, base64url: `tda_` + 43 characters. */
export function issueApiToken(random: (size: number) => Buffer = randomBytes): IssuedApiToken {
  const token = `${API_TOKEN_PREFIX}${random(32).toString('base64url')}`;
  const hash = hashApiToken(token);
  return { token, hash, tokenId: tokenIdOf(hash) };
}
