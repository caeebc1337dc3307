import { validatePutArguments, validateSignedUrlOptions } from './artifact-request';
import type { ArtifactStore, PutOptions, PutResult, SignedUrlOptions } from './artifact-store.port';
import { ArtifactConflictError, ArtifactNotFoundError } from './artifacts.errors';
import { sha256Hex } from './content-hash';
import { parseGcsUri } from './gcs-uri';

interface StoredObject {
  data: Buffer;
  contentType: string;
  sha256: string;
}

/**
 * ArtifactStore kept in a Map: for unit tests and the `memory` backend. Same validation and
 * create-only semantics as the GCS and local adapters (the shared conformance suite checks it).
 * Buffers are copied in and out so callers cannot mutate a stored object.
 */
export class InMemoryArtifactStore implements ArtifactStore {
  private readonly objects = new Map<string, StoredObject>();

  async put(uri: string, data: Buffer, options: PutOptions): Promise<PutResult> {
    const key = canonical(uri);
    validatePutArguments(data, options);
    const sha256 = sha256Hex(data);
    const existing = this.objects.get(key);
    if (existing !== undefined) {
      if (existing.data.equals(data)) {
        return { uri: key, created: false, sha256, bytes: data.length };
      }
      throw new ArtifactConflictError(key, {
        reason: 'different-bytes',
        attemptedSha256: sha256,
        existingSha256: existing.sha256,
      });
    }
    this.objects.set(key, { data: Buffer.from(data), contentType: options.contentType, sha256 });
    return { uri: key, created: true, sha256, bytes: data.length };
  }

  async read(uri: string): Promise<Buffer> {
    const key = canonical(uri);
    const existing = this.objects.get(key);
    if (existing === undefined) throw new ArtifactNotFoundError(key);
    return Buffer.from(existing.data);
  }

  async exists(uri: string): Promise<boolean> {
    return this.objects.has(canonical(uri));
  }

  /** `memory://<bucket>/<path>?expiresInSeconds=N`: not fetchable, but shows what was linked. */
  async signedUrl(uri: string, options: SignedUrlOptions): Promise<string> {
    const key = canonical(uri);
    const seconds = validateSignedUrlOptions(options);
    if (!this.objects.has(key)) throw new ArtifactNotFoundError(key);
    const { bucket, path } = parseGcsUri(key);
    const encodedPath = path.split('/').map(encodeURIComponent).join('/');
    return `memory://${bucket}/${encodedPath}?expiresInSeconds=${seconds}`;
  }

  /** Test helper: the content type recorded by put, or undefined. */
  contentTypeOf(uri: string): string | undefined {
    return this.objects.get(canonical(uri))?.contentType;
  }

  /** Test helper: every stored uri, sorted. */
  list(): string[] {
    return [...this.objects.keys()].sort();
  }
}

/** Validates the uri (InvalidArtifactUriError) and returns it as the map key. */
function canonical(uri: string): string {
  parseGcsUri(uri);
  return uri;
}
