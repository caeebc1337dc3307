import { describeError, logEvent, type Logger } from '@tda/observability';
import { parseCloudEventRequest } from './cloud-event';
import type { CloudEventIngress, CloudEventOutcome } from './cloud-event.ingress';
import type { HttpRoute, HttpRouteResponse } from './health.server';

/** Where Eventarc posts (the trigger's `--destination-run-path`). */
export const CLOUD_EVENTS_PATH = '/cloudevents';

/**
 * Firestore events carry the whole document (old and new value) as protobuf; the ingress reads
 * only headers, but Eventarc still sends the body. Firestore documents are ≤ 1 MiB each.
 */
const CLOUD_EVENT_MAX_BODY_BYTES = 4 * 1024 * 1024;

function describeOutcome(outcome: CloudEventOutcome): Record<string, unknown> {
  if (outcome.kind !== 'dispatched') return { ...outcome };
  const { kind, reason, status, errorCode } = outcome.outcome;
  return {
    kind: outcome.kind,
    runId: outcome.runId,
    stepId: outcome.stepId,
    harness: { kind, reason, status, errorCode },
  };
}

/**
 * POST /cloudevents → the ingress. Status codes follow what Eventarc (Pub/Sub push underneath)
 * does with them: 200 for every decided event, including ignored and no-op ones (redelivering
 * them cannot change the decision); 400 for a request that is not a CloudEvent; 500 for a
 * transient failure, which Eventarc retries. Bodies are {code,message,details} on errors.
 */
export function cloudEventRoute(ingress: CloudEventIngress, logger: Logger): HttpRoute {
  return {
    method: 'POST',
    path: CLOUD_EVENTS_PATH,
    maxBodyBytes: CLOUD_EVENT_MAX_BODY_BYTES,
    async handle({ headers, body }): Promise<HttpRouteResponse> {
      const parsed = parseCloudEventRequest(headers, body);
      if (!parsed.ok) {
        logEvent(logger, 'warn', 'cloud_event_ignored', {
          reason: 'invalid_envelope',
          issues: parsed.issues,
        });
        return {
          status: 400,
          body: {
            code: 'INVALID_REQUEST',
            message: `not a CloudEvent: ${parsed.issues.map((i) => `${i.path || '(body)'} ${i.message}`).join('; ')}`,
            details: { issues: parsed.issues },
          },
        };
      }
      try {
        const outcome = await ingress.handle(parsed.event);
        return { status: 200, body: describeOutcome(outcome) };
      } catch (error) {
        logEvent(logger, 'error', 'http_request_failed', {
          path: CLOUD_EVENTS_PATH,
          error: describeError(error),
        });
        return {
          status: 500,
          body: {
            code: 'INTERNAL_ERROR',
            message: 'the event could not be processed now; it will be retried',
            details: {},
          },
        };
      }
    },
  };
}
