import { TdaError } from '@tda/contracts';

/**
 * A failure the CLI itself detected (not an API answer), with a code of the contracts' closed
 * enum; printed as one line `error <CODE>: <message>`, exit 1.
 */
export class CliError extends TdaError {}
