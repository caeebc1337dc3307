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

/** Where HTTP credentials sit in request/response/error objects that get logged. */
export const REDACT_HEADER_CONTAINERS = [
  'headers',
  'req.headers',
  'request.headers',
  'res.headers',
  'response.headers',
  'config.headers',
  'error.config.headers',
] as const;

const HEADER_SPELLINGS = [
  'authorization',
  'Authorization',
  'proxy-authorization',
  'cookie',
  'Cookie',
  'set-cookie',
  'x-api-key',
  'X-API-KEY',
  'x-goog-api-key',
] as const;

function pathFor(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `["${key}"]`;
}

/**
 * The pino `redact.paths`: every secret spelling at the top level, and credential headers under
 * REDACT_HEADER_CONTAINERS. Deliberately short and without leading wildcards (`*.token`):
 * @pinojs/redact pays roughly 50 µs per line for each wildcard level, while this whole list
 * costs ~2-3 µs (a plain line is ~6 µs). Secrets at any other depth are caught by
 * redactSecrets(), which the logger runs on every line (formatters.log).
 */
export function buildRedactPaths(): string[] {
  const paths: string[] = REDACT_KEY_SPELLINGS.map((key) => {
    const leaf = pathFor(key);
    return leaf.startsWith('.') ? leaf.slice(1) : leaf;
  });
  for (const container of REDACT_HEADER_CONTAINERS) {
    for (const header of HEADER_SPELLINGS) paths.push(`${container}${pathFor(header)}`);
  }
  return paths;
}

const SECRET_KEY_SET: ReadonlySet<string> = new Set(SECRET_KEYS.map(normaliseKey));

function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/** Keys already judged: log lines repeat the same few dozen keys (bounded, then forgotten). */
const judgedKeys = new Map<string, boolean>();
const JUDGED_KEYS_MAX = 2_000;

export function isSecretKey(key: string): boolean {
  let secret = judgedKeys.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY_SET.has(normaliseKey(key));
    if (judgedKeys.size >= JUDGED_KEYS_MAX) judgedKeys.clear();
    judgedKeys.set(key, secret);
  }
  return secret;
}

/**
 * Replaces the value of every secret key (isSecretKey) at any depth by REDACTED. Copies only
 * the branches that contain a secret and returns `value` itself when there is none, so the
 * common case costs one walk and no allocation. Cycles are left alone; depth is bounded.
 */
export function redactSecrets<T>(value: T, maxDepth = 12): T {
  return redactWalk(value, maxDepth, []) as T;
}

/** `ancestors`: the objects above `value` (at most maxDepth), to leave a cycle alone. */
function redactWalk(value: unknown, depth: number, ancestors: object[]): unknown {
  if (typeof value !== 'object' || value === null || depth <= 0) return value;
  if (ancestors.includes(value) || Buffer.isBuffer(value) || value instanceof Date) return value;
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item: unknown, index) => {
        const next = redactWalk(item, depth - 1, ancestors);
        if (next !== item) {
          copy ??= [...value];
          copy[index] = next;
        }
      });
      return copy ?? value;
    }
    let copy: Record<string, unknown> | undefined;
    for (const [key, child] of Object.entries(value)) {
      const next = isSecretKey(key) ? REDACTED : redactWalk(child, depth - 1, ancestors);
      if (next !== child) {
        copy ??= { ...(value as Record<string, unknown>) };
        copy[key] = next;
      }
    }
    return copy ?? value;
  } finally {
    ancestors.pop();
  }
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
