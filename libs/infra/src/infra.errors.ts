import type { ErrorCode } from '@tda/contracts';

/**
 * The infra family: a deployment description or a GCP API answer that `tda infra` cannot work
 * with. `details` is safe to print (no credentials, no secret values).
 */
export class InfraError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly code: ErrorCode = 'INVALID_REQUEST',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
