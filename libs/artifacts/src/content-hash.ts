import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of the bytes; PutResult.sha256 and the GCS `sha256` metadata use it. */
export function sha256Hex(data: Buffer | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
