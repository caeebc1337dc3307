import type { ApiErrorBody } from './api-types';

/**
 * A failed API call as the console shows it: the orchestrator's `{code, message, details?,
 * retryable?}` and the HTTP status. A body that is not an ApiError (a proxy page, a network
 * failure) becomes one with a code naming what happened, so every error panel has a code.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly retryable: boolean;

  constructor(
    status: number,
    body: Omit<Partial<ApiErrorBody>, 'code'> & { code: string; message: string },
  ) {
    super(body.message);
    this.name = 'ApiError';
    this.status = status;
    this.code = body.code;
    this.details = body.details;
    this.retryable = body.retryable ?? false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The ApiError of an answer with `status` and (parsed) `body`. */
export function apiErrorFrom(status: number, body: unknown): ApiError {
  if (isRecord(body) && typeof body['code'] === 'string' && typeof body['message'] === 'string') {
    return new ApiError(status, {
      code: body['code'],
      message: body['message'],
      ...(isRecord(body['details']) ? { details: body['details'] } : {}),
      ...(typeof body['retryable'] === 'boolean' ? { retryable: body['retryable'] } : {}),
    });
  }
  return new ApiError(status, {
    code: `HTTP_${status}`,
    message: typeof body === 'string' && body !== '' ? body.slice(0, 300) : `HTTP ${status}`,
  });
}

/** Anything thrown by a query or mutation, as an ApiError (network failures included). */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ApiError(0, { code: 'NETWORK_ERROR', message: message || 'the request failed' });
}
