import { RUN_ID_PATTERN, STEP_ID_MAX_LENGTH, STEP_ID_PATTERN, TIMEFRAMES } from '@tda/contracts';
import type { ArtifactLocation } from './artifact-store.port';
import { InvalidArtifactRequestError, InvalidArtifactUriError } from './artifacts.errors';

/**
 * Bucket names per the GCS naming rules (lowercase letters, digits, '-', '_', '.'; 3-63 chars,
 * starting and ending with a letter or digit). Dotted names up to 222 chars exist but need
 * domain verification; we do not use them.
 */
const BUCKET_PATTERN = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;
/** GCS caps object names at 1024 bytes of UTF-8. */
const MAX_OBJECT_NAME_BYTES = 1024;
// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The segment used in place of a timeframe for steps that have none (e.g. `account_export`), so
 * that every artifact of a run sits at the same depth: `gs://b/runs/<runId>/_/<stepId>.json`.
 * '_' can never be a real timeframe (TIMEFRAMES are like '1h', '1M').
 */
export const NO_TIMEFRAME_SEGMENT = '_';

/**
 * Splits `gs://<bucket>/<path>` and validates it. Rejected (InvalidArtifactUriError): another
 * scheme, a bad bucket name, an empty path, empty segments (leading, trailing or doubled '/'),
 * '.' or '..' segments, control characters, names over 1024 bytes. The checks are strict on
 * purpose: the local adapter maps the path onto the filesystem, and the same rules in every
 * adapter keep a URI valid in memory exactly when it is valid on GCS.
 */
export function parseGcsUri(uri: string): ArtifactLocation {
  if (typeof uri !== 'string') throw new InvalidArtifactUriError(String(uri), 'not a string');
  if (!uri.startsWith('gs://')) throw new InvalidArtifactUriError(uri, "scheme must be 'gs://'");
  const rest = uri.slice('gs://'.length);
  const slash = rest.indexOf('/');
  if (slash < 0) throw new InvalidArtifactUriError(uri, 'missing object path');
  const bucket = rest.slice(0, slash);
  const path = rest.slice(slash + 1);
  validateBucket(uri, bucket);
  validatePath(uri, path);
  return { bucket, path };
}

/** Whether parseGcsUri accepts `value` (a type guard for URIs read from documents). */
export function isGcsUri(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    parseGcsUri(value);
    return true;
  } catch {
    return false;
  }
}

/** The inverse of parseGcsUri (validates too, so a formatted uri always parses). */
export function formatGcsUri(location: ArtifactLocation): string {
  const uri = `gs://${location.bucket}/${location.path}`;
  validateBucket(uri, location.bucket);
  validatePath(uri, location.path);
  return uri;
}

export interface ArtifactUriParts {
  bucket: string;
  /** e.g. 'runs'; may contain '/' for nesting; no leading/trailing '/'. */
  prefix: string;
  runId: string;
  /** A contracts Timeframe, or undefined/null for steps without one (→ NO_TIMEFRAME_SEGMENT). */
  timeframe?: string | null;
  stepId: string;
  /** Appended to the stepId: '.json' (default), or e.g. '.ctpl_default_v1.png' for a chart. */
  suffix?: string;
}

const SUFFIX_PATTERN = /^\.[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The deterministic artifact name of seed 002: `gs://<bucket>/<prefix>/<runId>/<timeframe>/<stepId><suffix>`.
 * Deterministic names are what make step re-execution idempotent (create-only put of the same
 * bytes under the same name). Each part is validated against the contracts' patterns so a bad
 * id cannot produce a surprising path.
 */
export function artifactUri(parts: ArtifactUriParts): string {
  const { bucket, prefix, runId, stepId } = parts;
  const suffix = parts.suffix ?? '.json';
  const timeframe = parts.timeframe ?? NO_TIMEFRAME_SEGMENT;
  const bad = (reason: string): never => {
    throw new InvalidArtifactRequestError(`cannot build artifact uri: ${reason}`, { reason });
  };
  if (!RUN_ID_PATTERN.test(runId))
    bad(`runId ${JSON.stringify(runId)} does not match RUN_ID_PATTERN`);
  if (!STEP_ID_PATTERN.test(stepId) || stepId.length > STEP_ID_MAX_LENGTH) {
    bad(`stepId ${JSON.stringify(stepId)} does not match STEP_ID_PATTERN`);
  }
  if (
    timeframe !== NO_TIMEFRAME_SEGMENT &&
    !(TIMEFRAMES as readonly string[]).includes(timeframe)
  ) {
    bad(`timeframe ${JSON.stringify(timeframe)} is not one of ${TIMEFRAMES.join(', ')}`);
  }
  if (!SUFFIX_PATTERN.test(suffix)) bad(`suffix ${JSON.stringify(suffix)} must look like '.json'`);
  const path = `${prefix}/${runId}/${timeframe}/${stepId}${suffix}`;
  return formatGcsUri({ bucket, path });
}

function validateBucket(uri: string, bucket: string): void {
  if (!BUCKET_PATTERN.test(bucket) || bucket.includes('..')) {
    throw new InvalidArtifactUriError(uri, `invalid bucket name ${JSON.stringify(bucket)}`);
  }
}

function validatePath(uri: string, path: string): void {
  if (path.length === 0) throw new InvalidArtifactUriError(uri, 'empty object path');
  if (CONTROL_CHARS.test(path)) throw new InvalidArtifactUriError(uri, 'control character in path');
  if (Buffer.byteLength(path, 'utf8') > MAX_OBJECT_NAME_BYTES) {
    throw new InvalidArtifactUriError(
      uri,
      `object path longer than ${MAX_OBJECT_NAME_BYTES} bytes`,
    );
  }
  for (const segment of path.split('/')) {
    if (segment === '') throw new InvalidArtifactUriError(uri, 'empty path segment');
    if (segment === '.' || segment === '..') {
      throw new InvalidArtifactUriError(uri, `'${segment}' path segment`);
    }
  }
}
