import { TdaError, type ErrorCode, type TdaErrorOptions } from '@tda/contracts';

/** A failure of an AccountSource (TdaError); messages and details never carry balances or secrets. */
export class AccountSourceError extends TdaError {
  constructor(code: ErrorCode, message: string, options: TdaErrorOptions = {}) {
    super(code, message, options);
  }
}

/**
 * The run names an account that does not exist or belongs to another owner (the same answer for
 * both). INVALID_STEP_INPUTS: the trigger checks it, so this is an account deleted since.
 */
export class UnknownAccountError extends AccountSourceError {
  constructor(readonly accountId: string) {
    super(
      'INVALID_STEP_INPUTS',
      `account '${accountId}' does not exist for the run's owner (deleted since the trigger?)`,
      { details: { accountId, field: 'accountId' }, retryable: false },
    );
  }
}
