import type { PutOptions, SignedUrlOptions } from './artifact-store.port';
import { InvalidArtifactRequestError } from './artifacts.errors';

/** V4 signed URLs are capped at 7 days by GCS; every adapter applies the same bound. */
export const MAX_SIGNED_URL_SECONDS = 7 * 24 * 60 * 60;

/** Shared argument checks, so every adapter rejects the same bad calls the same way. */
export function validatePutArguments(data: unknown, options: PutOptions | undefined): void {
  if (!Buffer.isBuffer(data))
    throw new InvalidArtifactRequestError('artifact data must be a Buffer');
  const contentType = options?.contentType;
  if (typeof contentType !== 'string' || !/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/.test(contentType)) {
    throw new InvalidArtifactRequestError('contentType must be a MIME type like application/json', {
      contentType: typeof contentType === 'string' ? contentType.slice(0, 100) : typeof contentType,
    });
  }
}

export function validateSignedUrlOptions(options: SignedUrlOptions | undefined): number {
  const seconds = options?.expiresInSeconds;
  if (
    typeof seconds !== 'number' ||
    !Number.isInteger(seconds) ||
    seconds < 1 ||
    seconds > MAX_SIGNED_URL_SECONDS
  ) {
    throw new InvalidArtifactRequestError(
      `expiresInSeconds must be an integer in 1..${MAX_SIGNED_URL_SECONDS}`,
      { expiresInSeconds: typeof seconds === 'number' ? seconds : typeof seconds },
    );
  }
  return seconds;
}
