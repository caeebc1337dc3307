import { createHash } from 'node:crypto';
import type { ExecutionGrid, GridRequest } from './grid';

/**
 * Canonical JSON as the seed defines it (Python `json.dumps(sort_keys=True, separators=(",", ":"),
 * ensure_ascii=True)`): keys sorted at every level, no spaces, non-ASCII escaped as \uXXXX.
 * `undefined` object members are dropped (as JSON.stringify does).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}

/** sha256 (hex) of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** request_hash: sha256 (hex) of the canonical JSON request (the grid and what it runs on). */
export function requestHash(request: GridRequest | Readonly<Record<string, unknown>>): string {
  return sha256Hex(canonicalJson(request));
}

/**
 * engine_params_hash: sha256 of the canonical JSON of the effective execution grid, i.e. after
 * runtime defaults were applied (the caller applies them; this pure library has no defaults of its
 * own to hide in the hash).
 */
export function engineParamsHash(effectiveExecution: ExecutionGrid): string {
  return sha256Hex(canonicalJson(effectiveExecution));
}
