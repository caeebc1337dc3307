import {
  Catch,
  HttpException,
  Inject,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { ERROR_CODE_INFO, isTdaError, type ApiError, type ErrorCode } from '@tda/contracts';
import { InvalidRunPatchError, StoreUnavailableError } from '@tda/flow-store';
import { currentLogContext, describeError, logEvent, type Logger } from '@tda/observability';
import { throwError, type Observable } from 'rxjs';
import { LOGGER } from '../orchestrator.tokens';
import type { HttpRequest, HttpResponse } from './http-types';

interface Mapped {
  code: ErrorCode;
  message: string;
  details?: Readonly<Record<string, unknown>>;
  retryable?: boolean;
  /** Unexpected: log it with describeError. */
  unexpected?: boolean;
  /** An upstream outage: answered with its code, and the cause logged (warn). */
  upstream?: string;
}

const MESSAGE_MAX = 2000;
const GENERIC_INTERNAL = 'internal error; see the service logs for this requestId';

/** 4xx statuses of Nest/http-errors exceptions -> the contract code with that meaning. */
function codeForClientStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'UNAUTHENTICATED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'CONFLICT';
    case 429:
      return 'QUOTA_EXCEEDED';
    default:
      return 'INVALID_REQUEST';
  }
}

/** contracts/api_error.schema.json: message is 1..2000 characters. */
function truncate(message: string): string {
  if (message === '') return 'error';
  return message.length <= MESSAGE_MAX ? message : `${message.slice(0, MESSAGE_MAX - 1)}…`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** body-parser / http-errors: a numeric 4xx `status` and `expose: true` (message is safe). */
function isExposedClientError(
  error: unknown,
): error is { status: number; message: string; type?: unknown } {
  return (
    isObject(error) &&
    typeof error['status'] === 'number' &&
    error['status'] >= 400 &&
    error['status'] < 500 &&
    error['expose'] === true &&
    typeof error['message'] === 'string'
  );
}

/** The log message of a 502: which backend failed. */
function upstreamOf(error: unknown): string {
  return error instanceof StoreUnavailableError ? 'run store unavailable' : 'upstream unavailable';
}

/**
 * Any TdaError -> {code, message, details}; INTERNAL_ERROR and unknown errors become a generic
 * INTERNAL_ERROR (logged, never echoed).
 */
export function mapError(error: unknown, request?: Pick<HttpRequest, 'method' | 'path'>): Mapped {
  // A patch the store refused is our bug, not the caller's: never answer it with a 400.
  if (
    error instanceof InvalidRunPatchError ||
    (isTdaError(error) && error.code === 'INTERNAL_ERROR')
  ) {
    return { code: 'INTERNAL_ERROR', message: GENERIC_INTERNAL, unexpected: true };
  }
  if (isTdaError(error)) {
    return {
      code: error.code,
      message: error.message,
      details: error.details,
      retryable: error.retryable,
      ...(error.code === 'UPSTREAM_UNAVAILABLE' ? { upstream: upstreamOf(error) } : {}),
    };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    if (status >= 500)
      return { code: 'INTERNAL_ERROR', message: GENERIC_INTERNAL, unexpected: true };
    const code = codeForClientStatus(status);
    if (status === 404 && request !== undefined) {
      return {
        code,
        message: `no route ${request.method} ${request.path}`,
        details: { method: request.method, path: request.path },
      };
    }
    // Nest raises a BadRequestException for a body that is not JSON (body-parser's message).
    if (status === 400) {
      return {
        code,
        message: 'request body is not valid JSON',
        details: { reason: error.message },
      };
    }
    return { code, message: error.message };
  }
  if (isExposedClientError(error)) {
    const details: Record<string, unknown> = { httpStatus: error.status };
    if (typeof error.type === 'string') details['type'] = error.type;
    return { code: codeForClientStatus(error.status), message: error.message, details };
  }
  return { code: 'INTERNAL_ERROR', message: GENERIC_INTERNAL, unexpected: true };
}

/**
 * The single error mapping of the HTTP API: every failure becomes
 * `{code, message, details?, retryable, requestId?}` (contracts/api_error.schema.json) with the
 * HTTP status ERROR_CODE_INFO[code].httpStatus. No stack traces, no messages of unexpected
 * errors (they are logged, sanitized, instead). Message handlers are not HTTP: their errors are
 * rethrown so the transport nacks.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void | Observable<never> {
    if (host.getType() !== 'http') return throwError(() => exception);
    const http = host.switchToHttp();
    const request = http.getRequest<HttpRequest>();
    const response = http.getResponse<HttpResponse>();
    const mapped = mapError(exception, request);
    const requestId = currentLogContext()['requestId'];
    if (mapped.unexpected === true) {
      // The line also carries the request context (requestId, traceparent).
      logEvent(
        this.logger,
        'error',
        'http_request_failed',
        { error: describeError(exception), method: request.method, path: request.path },
        'http request failed',
      );
    } else if (mapped.upstream !== undefined) {
      // The answer carries only the code; what the backend said is for the operator.
      logEvent(
        this.logger,
        'warn',
        'http_request_failed',
        { error: describeError(exception), method: request.method, path: request.path },
        mapped.upstream,
      );
    }
    const body: ApiError = {
      code: mapped.code,
      message: truncate(mapped.message),
      retryable: mapped.retryable ?? ERROR_CODE_INFO[mapped.code].retryable,
    };
    if (mapped.details !== undefined && Object.keys(mapped.details).length > 0) {
      body.details = { ...mapped.details };
    }
    if (typeof requestId === 'string') body.requestId = requestId;
    if (response.headersSent) return;
    if (mapped.code === 'UNAUTHENTICATED') response.setHeader('WWW-Authenticate', 'Bearer');
    response.status(ERROR_CODE_INFO[mapped.code].httpStatus).json(body);
  }
}
