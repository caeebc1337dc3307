import { InvalidRequestError } from '@tda/flow-engine';

/**
 * The id of an /events/stream event: what the client knows of each run it heard of recently
 * (runId → state token, most recent last) and `since`, the time from which it has seen every
 * change of runs not in the list. Capped at MAX_CURSOR_RUNS: a run pushed out moves `since` to
 * its last change, so the cursor stays small (a few KB) and never claims knowledge it lost.
 */
export interface StreamCursor {
  since: number;
  runs: Map<string, { token: string; updatedAt: number }>;
}

export const MAX_CURSOR_RUNS = 25;
const PREFIX = 'g1.';

export function encodeCursor(cursor: StreamCursor): string {
  const runs = [...cursor.runs].map(([runId, r]) => [runId, r.token, r.updatedAt]);
  return `${PREFIX}${Buffer.from(JSON.stringify({ s: cursor.since, r: runs })).toString('base64url')}`;
}

function invalid(): never {
  throw new InvalidRequestError('Last-Event-ID is not an id of this stream', {
    header: 'Last-Event-ID',
  });
}

export function decodeCursor(id: string): StreamCursor {
  if (!id.startsWith(PREFIX) || id.length > 16_000) invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    invalid();
  }
  const { s, r } = (parsed ?? {}) as { s?: unknown; r?: unknown };
  if (typeof s !== 'number' || !Array.isArray(r) || r.length > MAX_CURSOR_RUNS) invalid();
  const runs = new Map<string, { token: string; updatedAt: number }>();
  for (const entry of r as unknown[]) {
    if (!Array.isArray(entry)) invalid();
    const [runId, token, updatedAt] = entry as unknown[];
    if (typeof runId !== 'string' || typeof token !== 'string' || typeof updatedAt !== 'number') {
      invalid();
    }
    runs.set(runId, { token, updatedAt });
  }
  return { since: s, runs };
}

/** Records the client's new state of a run (most recent last), evicting the oldest beyond the cap. */
export function remember(
  cursor: StreamCursor,
  runId: string,
  token: string,
  updatedAt: number,
): void {
  cursor.runs.delete(runId);
  cursor.runs.set(runId, { token, updatedAt });
  while (cursor.runs.size > MAX_CURSOR_RUNS) {
    const [oldest] = cursor.runs;
    if (oldest === undefined) break;
    cursor.runs.delete(oldest[0]);
    cursor.since = Math.max(cursor.since, oldest[1].updatedAt);
  }
}
