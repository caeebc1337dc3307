import {
  ArtifactConflictError,
  ArtifactStoreError,
  isGcsUri,
  sha256Hex,
  type ArtifactStore,
} from '@tda/artifacts';
import { ERROR_CODE_INFO, ERROR_CODES, type ErrorCode, type ErrorInfo } from '@tda/contracts';
import { errorInfo } from '@tda/flow-engine';
import { contentTypeForUri } from './artifact-naming';
import { exponentialDelayMs } from './retry';
import { ArtifactWriteRetryableError } from './harness.errors';
import type { StepArtifact, StepResult } from './step-handler';

/** What outputs.execution.artifact records about the primary artifact. */
export interface WrittenArtifact {
  gcs_uri: string;
  sha256: string;
  bytes: number;
  contentType: string;
}

export type ArtifactWriteOutcome =
  | { kind: 'written'; primary: WrittenArtifact; created: number; existed: number }
  /** A non-retryable problem: the step is finalized FAILED with this error. */
  | { kind: 'failed'; error: ErrorInfo }
  /** The execution was aborted (lease lost) between two writes: write nothing more. */
  | { kind: 'aborted' };

export interface ArtifactWriterOptions {
  artifacts: ArtifactStore;
  maxTries: number;
  baseDelayMs: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>;
  /** Stops between writes when aborted (only lease loss aborts at this stage). */
  signal?: AbortSignal;
}

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

interface ClassifiedError {
  retryable: boolean;
  conflict: boolean;
  code?: string;
  name: string;
}

/**
 * Classifies an ArtifactStore error: ArtifactConflictError (different bytes under a create-only
 * name) is never retryable; other ArtifactStoreErrors say so themselves; a foreign error with a
 * `retryable` flag or a known ErrorCode is taken at its word; anything unclassified is treated as
 * transient (a raw network error), bounded by maxTries and then by redelivery.
 */
export function classifyArtifactError(error: unknown): ClassifiedError {
  const name = safeName(error);
  if (error instanceof ArtifactConflictError) {
    return { retryable: false, conflict: true, name, code: error.code };
  }
  if (error instanceof ArtifactStoreError) {
    return { retryable: error.retryable, conflict: false, name, code: error.code };
  }
  const record =
    typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const code = typeof record['code'] === 'string' ? record['code'] : undefined;
  let retryable: boolean;
  if (typeof record['retryable'] === 'boolean') retryable = record['retryable'];
  else if (code !== undefined && KNOWN_CODES.has(code)) {
    retryable = ERROR_CODE_INFO[code as ErrorCode].retryable;
  } else retryable = true;
  return { retryable, conflict: false, name, ...(code === undefined ? {} : { code }) };
}

/** An error's class name, if it looks like one; never its message (it may carry payload). */
export function safeName(error: unknown): string {
  const name =
    error instanceof Error
      ? error.name !== 'Error'
        ? error.name
        : error.constructor.name
      : typeof error;
  return /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name) ? name : 'Error';
}

/** Checks the shape of a handler's result; returns a reason when it cannot be written. */
export function resultProblem(result: StepResult): string | undefined {
  if (typeof result !== 'object' || result === null) return 'the handler returned no result';
  if (!Array.isArray(result.artifacts)) return 'result.artifacts is not an array';
  if (!isGcsUri(result.primaryUri)) {
    return 'result.primaryUri is not a gs:// URI';
  }
  const seen = new Set<string>();
  for (const artifact of result.artifacts as unknown[]) {
    if (typeof artifact !== 'object' || artifact === null) return 'an artifact is not an object';
    const { uri, data, contentType } = artifact as Partial<StepArtifact>;
    if (!isGcsUri(uri)) return 'an artifact uri is not a gs:// URI';
    if (!Buffer.isBuffer(data)) return `artifact ${uri} has no Buffer data`;
    if (typeof contentType !== 'string' || contentType === '') {
      return `artifact ${uri} has no contentType`;
    }
    if (seen.has(uri)) return `artifact ${uri} is listed twice`;
    seen.add(uri);
  }
  return undefined;
}

/**
 * Writes a result's artifacts create-only, the primary LAST (its existence then implies every
 * other artifact exists — what the recovery check relies on). Identical bytes already present
 * count as success (idempotent re-execution); different bytes are a non-retryable failure.
 * Retryable errors are retried with exponential backoff, then thrown (ArtifactWriteRetryableError
 * → nack). A primary that is not among the artifacts must already exist (it is read to record
 * its sha256).
 */
export async function writeStepArtifacts(
  result: StepResult,
  options: ArtifactWriterOptions,
): Promise<ArtifactWriteOutcome> {
  const problem = resultProblem(result);
  if (problem !== undefined) {
    return {
      kind: 'failed',
      error: errorInfo('INTERNAL_ERROR', `invalid handler result: ${problem}`),
    };
  }
  const ordered = [
    ...result.artifacts.filter((a) => a.uri !== result.primaryUri),
    ...result.artifacts.filter((a) => a.uri === result.primaryUri),
  ];
  let primary: WrittenArtifact | undefined;
  let created = 0;
  let existed = 0;
  for (const artifact of ordered) {
    if (options.signal?.aborted === true) return { kind: 'aborted' };
    const put = await putWithRetry(artifact, options);
    if (put.kind === 'failed') return put;
    if (put.created) created += 1;
    else existed += 1;
    if (artifact.uri === result.primaryUri) {
      primary = {
        gcs_uri: artifact.uri,
        sha256: put.sha256,
        bytes: put.bytes,
        contentType: artifact.contentType,
      };
    }
  }
  if (primary === undefined) {
    const found = await describeExistingArtifact(options.artifacts, result.primaryUri);
    if (found === undefined) {
      return {
        kind: 'failed',
        error: errorInfo(
          'INTERNAL_ERROR',
          'invalid handler result: the primary artifact is neither in result.artifacts nor stored',
          { primaryUri: result.primaryUri },
        ),
      };
    }
    primary = found;
  }
  return { kind: 'written', primary, created, existed };
}

/** sha256, size and content type of an existing artifact, or undefined when absent. */
export async function describeExistingArtifact(
  artifacts: Pick<ArtifactStore, 'exists' | 'read'>,
  uri: string,
): Promise<WrittenArtifact | undefined> {
  if (!(await artifacts.exists(uri))) return undefined;
  const data = await artifacts.read(uri);
  return {
    gcs_uri: uri,
    sha256: sha256Hex(data),
    bytes: data.length,
    contentType: contentTypeForUri(uri),
  };
}

async function putWithRetry(
  artifact: StepArtifact,
  options: ArtifactWriterOptions,
): Promise<
  | { kind: 'put'; created: boolean; sha256: string; bytes: number }
  | { kind: 'failed'; error: ErrorInfo }
> {
  for (let tries = 1; ; tries += 1) {
    try {
      const put = await options.artifacts.put(artifact.uri, artifact.data, {
        contentType: artifact.contentType,
      });
      return { kind: 'put', created: put.created, sha256: put.sha256, bytes: put.bytes };
    } catch (error) {
      const classified = classifyArtifactError(error);
      if (classified.conflict) {
        return {
          kind: 'failed',
          error: {
            code: 'GCS_WRITE_FAILED',
            message: `artifact ${artifact.uri} already exists with different content; artifacts are create-only, so the step's output is not deterministic`,
            retryable: false,
            details: {
              uri: artifact.uri,
              reason: 'artifact_conflict',
              attemptedSha256: sha256Hex(artifact.data),
              ...(error instanceof ArtifactConflictError &&
              typeof error.details['existingSha256'] === 'string'
                ? { existingSha256: error.details['existingSha256'] }
                : {}),
            },
          },
        };
      }
      if (!classified.retryable) {
        return {
          kind: 'failed',
          error: {
            code: 'GCS_WRITE_FAILED',
            message: `artifact ${artifact.uri} could not be written (${classified.name})`,
            retryable: false,
            details: {
              uri: artifact.uri,
              reason: 'write_rejected',
              errorClass: classified.name,
              ...(classified.code === undefined ? {} : { errorCode: classified.code }),
            },
          },
        };
      }
      if (tries >= options.maxTries)
        throw new ArtifactWriteRetryableError(artifact.uri, tries, error);
      await options.sleep(exponentialDelayMs(tries, options.baseDelayMs, Number.POSITIVE_INFINITY));
    }
  }
}
