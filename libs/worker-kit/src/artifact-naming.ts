import { artifactUri } from '@tda/artifacts';
import type { Timeframe } from '@tda/contracts';

export interface StepArtifactLocation {
  bucket: string;
  prefix: string;
  runId: string;
  stepId: string;
  /** The step's timeframe; steps without one get @tda/artifacts' NO_TIMEFRAME_SEGMENT ('_'). */
  timeframe?: Timeframe;
}

/**
 * The deterministic artifact name of seed 002 (`gs://<bucket>/<prefix>/<runId>/<timeframe>/
 * <stepId><suffix>`, built by @tda/artifacts' artifactUri). Deterministic names plus create-only
 * writes are what make a step idempotent: a re-execution writes the same bytes under the same
 * name, and the recovery check finds the primary artifact of a crashed attempt without being
 * told where it is.
 */
export function stepArtifactUri(location: StepArtifactLocation, suffix: string): string {
  return artifactUri({
    bucket: location.bucket,
    prefix: location.prefix,
    runId: location.runId,
    stepId: location.stepId,
    timeframe: location.timeframe ?? null,
    suffix,
  });
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  json: 'application/json',
  png: 'image/png',
  svg: 'image/svg+xml',
  md: 'text/markdown',
  txt: 'text/plain',
  csv: 'text/csv',
};

/** Best-effort content type from the name (recovery has only the name and the bytes). */
export function contentTypeForUri(uri: string): string {
  const slash = uri.lastIndexOf('/');
  const dot = uri.lastIndexOf('.');
  const ext = dot <= slash ? '' : uri.slice(dot + 1).toLowerCase();
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}
