/**
 * ArtifactStore: where steps put their outputs (DESIGN.md §5 step 3). URIs are `gs://bucket/path`
 * in every mode; the local adapter maps them under a data directory. Writes are CREATE-ONLY:
 * deterministic names (seed 002) plus create-only puts are what make a step idempotent — a
 * retried or duplicated step writes the same bytes to the same name and is told it already
 * existed, while different bytes under an existing name are an error, never an overwrite.
 */
export interface PutOptions {
  contentType: string;
}

export interface PutResult {
  uri: string;
  /** false when an object with identical bytes already existed (idempotent success). */
  created: boolean;
  sha256: string;
  bytes: number;
}

export interface SignedUrlOptions {
  expiresInSeconds: number;
}

export interface ArtifactStore {
  put(uri: string, data: Buffer, options: PutOptions): Promise<PutResult>;
  /** Throws ArtifactNotFoundError when absent. */
  read(uri: string): Promise<Buffer>;
  exists(uri: string): Promise<boolean>;
  /** A time-limited URL to read the object (file:// URL for the local adapter). */
  signedUrl(uri: string, options: SignedUrlOptions): Promise<string>;
}

export interface ArtifactLocation {
  bucket: string;
  path: string;
}
