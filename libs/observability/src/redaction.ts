import { createHash } from 'node:crypto';

export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are secrets wherever they appear. Matching in sanitizeForLog is by normalised
 * name (case and `-`/`_` ignored), so `apiKey`, `api_key` and `X-API-KEY` are one entry.
 */
export const SECRET_KEYS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'apiKey',
  'x-api-key',
  'x-goog-api-key',
  'token',
  'accessToken',
  'refreshToken',
  'idToken',
  'password',
  'passwd',
  'secret',
  'clientSecret',
  'privateKey',
  'private_key_id',
  'credentials',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
] as const;

/** Spellings pino's path-based redaction must list explicitly (it matches keys exactly). */
const REDACT_KEY_SPELLINGS = [
  'authorization',
  'Authorization',
  'proxy-authorization',
  'cookie',
  'Cookie',
  'set-cookie',
  'apiKey',
  'api_key',
  'apikey',
  'x-api-key',
  'X-API-KEY',
  'x-goog-api-key',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'idToken',
  'id_token',
  'password',
  'passwd',
  'secret',
  'clientSecret',
  'client_secret',
  'privateKey',
  'private_key',
  'private_key_id',
  'credentials',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
] as const;

/**
 * How deep the pino redact paths reach (`key`, `*.key`, `*.*.key`, ...). pino's wildcard matches
 * exactly one level, so "any depth" has to be spelled out; four levels cover request objects
 * (`req.headers.authorization`) and config blobs. Deeper structures must go through
 * sanitizeForLog, which has no depth limit for secrets.
 */
export const REDACT_DEPTH = 4;

function pathFor(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : `["${key}"]`;
}

/** The pino `redact.paths` list built from REDACT_KEY_SPELLINGS up to REDACT_DEPTH levels. */
export function buildRedactPaths(depth: number = REDACT_DEPTH): string[] {
  const paths: string[] = [];
  for (const key of REDACT_KEY_SPELLINGS) {
    const leaf = pathFor(key);
    for (let level = 0; level < depth; level++) {
      const prefix = '*.'.repeat(level);
      // `*.["x-api-key"]` is not valid syntax; bracket keys attach without a dot.
      paths.push(leaf.startsWith('[') ? `${prefix.slice(0, -1)}${leaf}` : `${prefix}${leaf}`);
    }
  }
  return paths;
}

const SECRET_KEY_SET: ReadonlySet<string> = new Set(SECRET_KEYS.map(normaliseKey));

function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

export function isSecretKey(key: string): boolean {
  return SECRET_KEY_SET.has(normaliseKey(key));
}

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** What a long string becomes in logs: enough to correlate, nothing to read. */
export interface DigestedText {
  length: number;
  sha256: string;
}

export function digestText(value: string | Buffer): DigestedText {
  return { length: value.length, sha256: sha256Hex(value) };
}

export interface SanitizeOptions {
  /** Strings longer than this become {length, sha256}. */
  maxStringLength?: number;
  maxDepth?: number;
  maxArrayLength?: number;
}

export type Sanitized =
  string | number | boolean | null | Sanitized[] | { [key: string]: Sanitized };

/**
 * Makes an arbitrary value safe to log or to store in `error.details` (DESIGN.md §6): secrets by
 * key are replaced at any depth, long strings (prompt text, model output, payloads) become
 * {length, sha256}, buffers are digested, cycles and excessive depth are cut. The result is plain
 * JSON.
 */
export function sanitizeForLog(value: unknown, options: SanitizeOptions = {}): Sanitized {
  const limits = {
    maxStringLength: options.maxStringLength ?? 256,
    maxDepth: options.maxDepth ?? 8,
    maxArrayLength: options.maxArrayLength ?? 50,
  };
  return sanitize(value, limits, 0, new WeakSet());
}

function sanitize(
  value: unknown,
  limits: Required<SanitizeOptions>,
  depth: number,
  seen: WeakSet<object>,
): Sanitized {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
      return value.length > limits.maxStringLength ? { ...digestText(value) } : value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'symbol':
    case 'function':
      return null;
    default:
      break;
  }
  if (Buffer.isBuffer(value)) return { ...digestText(value) };
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Error) {
    return sanitize(errorToPlain(value), limits, depth, seen);
  }
  const object = value as object;
  if (seen.has(object)) return '[Circular]';
  if (depth >= limits.maxDepth) return '[Truncated]';
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      const items = object
        .slice(0, limits.maxArrayLength)
        .map((item: unknown) => sanitize(item, limits, depth + 1, seen));
      if (object.length > limits.maxArrayLength) {
        items.push(`[+${object.length - limits.maxArrayLength} more]`);
      }
      return items;
    }
    const out: { [key: string]: Sanitized } = {};
    for (const [key, child] of Object.entries(object)) {
      out[key] = isSecretKey(key) ? REDACTED : sanitize(child, limits, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(object);
  }
}

function errorToPlain(error: Error): Record<string, unknown> {
  const plain: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) plain['code'] = code;
  if (error.cause !== undefined) plain['cause'] = error.cause;
  return plain;
}

/**
 * A loggable summary of anything thrown: name, message, code (and the cause chain), sanitised.
 * The stack is left out on purpose: its first line repeats the message, which may embed input
 * text.
 */
export function describeError(error: unknown, options: SanitizeOptions = {}): Sanitized {
  if (error instanceof Error) return sanitizeForLog(errorToPlain(error), options);
  return sanitizeForLog(error, options);
}
