import { randomBytes } from 'node:crypto';

/** A parsed W3C `traceparent` header (https://www.w3.org/TR/trace-context/). */
export interface TraceContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;

/**
 * Parses a traceparent; returns undefined for anything malformed (including the all-zero ids the
 * spec declares invalid and the reserved version ff) so that a bad attribute on a message never
 * breaks handling, it only loses the trace correlation.
 */
export function parseTraceparent(value: string | undefined | null): TraceContext | undefined {
  if (typeof value !== 'string') return undefined;
  // Canonical values (what TDA writes) match as they are; only others are trimmed and lowered.
  const match = TRACEPARENT.exec(value) ?? TRACEPARENT.exec(value.trim().toLowerCase());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags] = match;
  if (
    version === undefined ||
    traceId === undefined ||
    spanId === undefined ||
    flags === undefined ||
    version === 'ff' ||
    ALL_ZERO.test(traceId) ||
    ALL_ZERO.test(spanId)
  ) {
    return undefined;
  }
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

export function formatTraceparent({ traceId, spanId, sampled }: TraceContext): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

/**
 * `bytes` random bytes as hex, cut from a pool filled 4 KiB at a time: a randomBytes call per id
 * cost ~25 µs and every publish takes one (issue 16, bench profile). Same CSPRNG, never reused.
 */
function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

/** A fresh trace (new trace id and span id), sampled. */
export function generateTraceparent(): string {
  return formatTraceparent({ traceId: randomHex(16), spanId: randomHex(8), sampled: true });
}

/**
 * The traceparent for an outgoing hop: same trace, new span id. Starts a new trace when the parent
 * is missing or malformed, so every published message carries a valid one.
 */
export function childTraceparent(parent: string | undefined): string {
  const parsed = parseTraceparent(parent);
  if (parsed === undefined) return generateTraceparent();
  return formatTraceparent({ ...parsed, spanId: randomHex(8) });
}

/** Cloud Logging's special trace fields for one log line. */
export function cloudTraceFields(
  traceparent: string | undefined,
  projectId: string | undefined,
): Record<string, string | boolean> {
  const trace = parseTraceparent(traceparent);
  if (trace === undefined) return {};
  return {
    'logging.googleapis.com/trace':
      projectId === undefined ? trace.traceId : `projects/${projectId}/traces/${trace.traceId}`,
    'logging.googleapis.com/spanId': trace.spanId,
    'logging.googleapis.com/trace_sampled': trace.sampled,
  };
}
