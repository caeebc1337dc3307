import { TdaError, type ErrorCode, type TdaErrorOptions } from '@tda/contracts';

export interface InfraErrorOptions extends TdaErrorOptions {
  /** Default INVALID_REQUEST: most infra errors are a description `tda infra` cannot use. */
  code?: ErrorCode;
}

/**
 * The infra family (TdaError): a deployment description or a GCP API answer that `tda infra`
 * cannot work with. `details` is safe to print (no credentials, no secret values).
 */
export class InfraError extends TdaError {
  constructor(message: string, options: InfraErrorOptions = {}) {
    const { code = 'INVALID_REQUEST', ...rest } = options;
    super(code, message, rest);
  }
}
