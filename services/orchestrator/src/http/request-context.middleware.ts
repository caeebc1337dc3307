import { generateTraceparent, parseTraceparent, withLogContext } from '@tda/observability';
import { headerValue, type HttpRequest, type HttpResponse, type NextFunction } from './http-types';

/**
 * Runs the rest of the request inside a log context: the caller's W3C `traceparent` (or a new
 * trace) and a `requestId` (its trace id) that error bodies and the X-Request-Id header echo.
 * BrokerPublisher derives the step-ready messages' traceparent from this context, so one trace
 * follows a trigger through the workers.
 */
export function requestContextMiddleware(
  request: HttpRequest,
  response: HttpResponse,
  next: NextFunction,
): void {
  const incoming = headerValue(request, 'traceparent');
  const traceparent =
    incoming !== undefined && parseTraceparent(incoming) !== undefined
      ? incoming.trim().toLowerCase()
      : generateTraceparent();
  const requestId = parseTraceparent(traceparent)?.traceId ?? traceparent;
  response.setHeader('X-Request-Id', requestId);
  withLogContext({ traceparent, requestId }, () => next());
}
