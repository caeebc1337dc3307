import { createHash } from 'node:crypto';
import type { File, Storage } from '@google-cloud/storage';
import { validatePutArguments, validateSignedUrlOptions } from './artifact-request';
import type { ArtifactStore, PutOptions, PutResult, SignedUrlOptions } from './artifact-store.port';
import {
  ArtifactConflictError,
  ArtifactNotFoundError,
  ArtifactReadError,
  ArtifactSigningError,
  ArtifactWriteError,
} from './artifacts.errors';
import { sha256Hex } from './content-hash';
import { parseGcsUri } from './gcs-uri';

export interface GcsArtifactStoreOptions {
  /** A configured client (credentials, retries, endpoint are the caller's concern). */
  storage: Storage;
  /** Per-request timeout of an upload. Default 60 s. */
  uploadTimeoutMs?: number;
}

/**
 * ArtifactStore on Cloud Storage. Create-only puts use the `ifGenerationMatch: 0` precondition
 * ("only if no live object has this name"), so GCS itself decides the race between concurrent
 * writers. A 412 means the name was taken: the existing object is downloaded and compared —
 * identical bytes are an idempotent success (created:false), different bytes an
 * ArtifactConflictError. Uploads are single-request multipart (resumable:false: artifacts are
 * small) and carry the MD5 so GCS rejects a corrupted body instead of storing it; the client
 * additionally checks the returned CRC32C.
 */
export class GcsArtifactStore implements ArtifactStore {
  private readonly storage: Storage;
  private readonly uploadTimeoutMs: number;

  constructor(options: GcsArtifactStoreOptions) {
    this.storage = options.storage;
    this.uploadTimeoutMs = options.uploadTimeoutMs ?? 60_000;
  }

  async put(uri: string, data: Buffer, options: PutOptions): Promise<PutResult> {
    const file = this.fileOf(uri);
    validatePutArguments(data, options);
    const sha256 = sha256Hex(data);
    const result = (created: boolean): PutResult => ({ uri, created, sha256, bytes: data.length });
    try {
      await file.save(data, {
        resumable: false,
        contentType: options.contentType,
        validation: 'crc32c',
        timeout: this.uploadTimeoutMs,
        // The precondition that makes the write create-only. With it set, the client's
        // retry of a transient failure is safe too: a retry after a lost success answers 412.
        preconditionOpts: { ifGenerationMatch: 0 },
        metadata: {
          md5Hash: createHash('md5').update(data).digest('base64'),
          metadata: { sha256 },
        },
      });
      return result(true);
    } catch (error) {
      if (httpStatus(error) !== 412) {
        throw new ArtifactWriteError(uri, describeGcsFailure(error), gcsDetails(error));
      }
    }
    let existing: Buffer;
    try {
      [existing] = await file.download();
    } catch (error) {
      // 404 here: the object was deleted between the 412 and the download; a retry resolves it.
      throw new ArtifactWriteError(
        uri,
        `name taken but the existing object could not be read for comparison (${describeGcsFailure(error)})`,
        gcsDetails(error),
      );
    }
    if (existing.equals(data)) return result(false);
    throw new ArtifactConflictError(uri, {
      reason: 'different-bytes',
      attemptedSha256: sha256,
      existingSha256: sha256Hex(existing),
    });
  }

  async read(uri: string): Promise<Buffer> {
    const file = this.fileOf(uri);
    try {
      const [contents] = await file.download();
      return contents;
    } catch (error) {
      if (httpStatus(error) === 404) throw new ArtifactNotFoundError(uri);
      throw new ArtifactReadError(uri, describeGcsFailure(error), gcsDetails(error));
    }
  }

  async exists(uri: string): Promise<boolean> {
    const file = this.fileOf(uri);
    try {
      const [found] = await file.exists();
      return found;
    } catch (error) {
      throw new ArtifactReadError(uri, describeGcsFailure(error), gcsDetails(error));
    }
  }

  /**
   * A V4 signed GET URL. Signing needs a service-account identity: a key in the credentials
   * (signed locally) or the IAM signBlob permission (ADC on Cloud Run). The object must exist:
   * a link to nothing is a bug worth surfacing at link time.
   */
  async signedUrl(uri: string, options: SignedUrlOptions): Promise<string> {
    const file = this.fileOf(uri);
    const seconds = validateSignedUrlOptions(options);
    if (!(await this.exists(uri))) throw new ArtifactNotFoundError(uri);
    try {
      // One clock reading for both ends, so X-Goog-Expires is exactly `seconds` (the signer
      // would otherwise read the clock again and round).
      const now = Date.now();
      const [url] = await file.getSignedUrl({
        version: 'v4',
        action: 'read',
        accessibleAt: now,
        expires: now + seconds * 1000,
      });
      return url;
    } catch (error) {
      throw new ArtifactSigningError(uri, describeSigningFailure(error));
    }
  }

  private fileOf(uri: string): File {
    const { bucket, path } = parseGcsUri(uri);
    return this.storage.bucket(bucket).file(path);
  }
}

/** The HTTP status of a client error (ApiError.code), if it has one. */
function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'number' ? error.code : undefined;
}

const SAFE_TOKEN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * A short, safe description: the HTTP status and GCS reason token, or a Node errno / client error
 * code. Messages and response bodies are left out on purpose — they can echo object names,
 * signed URLs or request details that do not belong in a step error stored in Firestore.
 */
function describeGcsFailure(error: unknown): string {
  const status = httpStatus(error);
  const reason = gcsReason(error);
  if (status !== undefined) return `HTTP ${status}${reason === undefined ? '' : ` ${reason}`}`;
  const code = errorCodeString(error);
  if (code !== undefined) return code;
  return error instanceof Error && SAFE_TOKEN.test(error.name) ? error.name : 'unexpected error';
}

/**
 * Signing errors come from google-auth-library before any request is made ("Cannot sign data
 * without `client_email`"); their text is the useful part. URLs are cut out in case one carries
 * a token, and the length is bounded.
 */
function describeSigningFailure(error: unknown): string {
  const status = httpStatus(error);
  if (status !== undefined) return describeGcsFailure(error);
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/https?:\/\/\S+/g, '<url>').slice(0, 200);
}

function gcsDetails(error: unknown): Record<string, unknown> {
  const status = httpStatus(error);
  const reason = gcsReason(error);
  const code = errorCodeString(error);
  return {
    ...(status === undefined ? {} : { httpStatus: status }),
    ...(reason === undefined ? {} : { gcsReason: reason }),
    ...(code === undefined ? {} : { errorCode: code }),
  };
}

function gcsReason(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('errors' in error)) return undefined;
  const errors: unknown = error.errors;
  if (!Array.isArray(errors)) return undefined;
  const first: unknown = errors[0];
  if (typeof first !== 'object' || first === null || !('reason' in first)) return undefined;
  return typeof first.reason === 'string' && SAFE_TOKEN.test(first.reason)
    ? first.reason
    : undefined;
}

function errorCodeString(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' && SAFE_TOKEN.test(error.code) ? error.code : undefined;
}
