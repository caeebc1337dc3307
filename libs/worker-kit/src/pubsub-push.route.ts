import { describeError, logEvent, withLogContext, type Logger } from '@tda/observability';
import type {
  HttpHeaders,
  HttpRoute,
  HttpRouteResponse,
  IdTokenCheck,
  IdTokenVerifier,
} from '@tda/service-runtime';
import { parsePushEnvelope } from './pubsub-push.envelope';
import type { HarnessOutcome } from './harness-outcome';
import type { PushSettlement, PushSubscriptionBroker } from './pubsub-push.subscriber';

/** Where Pub/Sub pushes (the push subscription's endpoint path on the worker's PORT). */
export const PUBSUB_PUSH_PATH = '/pubsub/push';

export interface PubSubPushRouteOptions {
  /** The transport's subscription source (bootstrapWorker builds it for TDA_INGRESS=push). */
  subscriber: Pick<PushSubscriptionBroker, 'deliver'>;
  /** The subscription the transport consumes: stepReadySubscription(stepType, prefix). */
  subscription: string;
  verifier: IdTokenVerifier;
  logger: Logger;
}

function header(headers: HttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function error(
  status: number,
  code: 'INVALID_REQUEST' | 'UNAUTHENTICATED' | 'INTERNAL_ERROR',
  message: string,
  details: Record<string, unknown>,
  headers?: Record<string, string>,
): HttpRouteResponse {
  return {
    status,
    body: { code, message, details },
    ...(headers === undefined ? {} : { headers }),
  };
}

/**
 * POST /pubsub/push: a Pub/Sub push delivery of a step-ready message, run through the same
 * transport and harness as a pulled one. Status codes (Pub/Sub acks 102/200/201/202/204 only;
 * everything else is redelivered with the subscription's backoff, then dead-lettered after
 * maxDeliveryAttempts when a dead-letter topic is set):
 * - 401 UNAUTHENTICATED: missing or refused OIDC token (every refusal, see IdTokenRejection);
 *   nothing parsed, no harness call, no store access.
 * - 400 INVALID_REQUEST: not a push envelope, or a message the transport/harness refuses as
 *   invalid (messageType, JSON, step-ready contract, unsafe stepId, foreign step type); no store
 *   access for envelope, messageType, JSON and contract problems. Never acked: a poison message
 *   ends in the dead-letter topic.
 * - 200: the harness decided (executed, recovered, failed, no-op): acked, with the decision.
 * - 500: what the pull transport would nack (store unavailable, conflicts exhausted, retryable
 *   artifact failure, shutdown, draining, over capacity) or keys unreachable: redelivered.
 * - 503: the transport is not consuming (before start, after close): redelivered.
 */
export function pubSubPushRoute(options: PubSubPushRouteOptions): HttpRoute {
  return {
    method: 'POST',
    path: PUBSUB_PUSH_PATH,
    async handle({ headers, body }): Promise<HttpRouteResponse> {
      const refused = await authenticate(options, header(headers, 'authorization'));
      if (refused !== undefined) return refused;
      const parsed = parsePushEnvelope(body);
      if (!parsed.ok) {
        logEvent(options.logger, 'warn', 'pubsub_push_rejected', {
          status: 400,
          reason: 'invalid_envelope',
          issues: parsed.issues,
        });
        const problems = parsed.issues.map((i) => `${i.path || '(body)'} ${i.message}`).join('; ');
        return error(400, 'INVALID_REQUEST', `not a Pub/Sub push envelope: ${problems}`, {
          reason: 'invalid_envelope',
          issues: parsed.issues,
        });
      }
      const { envelope } = parsed;
      const { messageId } = envelope.message;
      return withLogContext({ messageId, pushSubscription: envelope.subscription }, async () => {
        const settlement = await options.subscriber.deliver(
          options.subscription,
          envelope.message,
          envelope.deliveryAttempt,
        );
        return answer(options.logger, settlement, messageId);
      });
    },
  };
}

/** undefined when the token is good; otherwise the 401 (refused) or 500 (cannot tell now). */
async function authenticate(
  options: PubSubPushRouteOptions,
  authorization: string | undefined,
): Promise<HttpRouteResponse | undefined> {
  const { logger } = options;
  let check: IdTokenCheck;
  try {
    check = await options.verifier.verify(authorization);
  } catch (cause) {
    logEvent(logger, 'error', 'http_request_failed', {
      path: PUBSUB_PUSH_PATH,
      stage: 'authentication',
      error: describeError(cause),
    });
    return error(500, 'INTERNAL_ERROR', 'the token could not be verified now', {});
  }
  if (check.ok) return undefined;
  // The token is never logged; `email` only when Google's signature was verified.
  logEvent(logger, 'warn', 'pubsub_push_unauthenticated', {
    reason: check.reason,
    ...(check.email === undefined ? {} : { email: check.email }),
  });
  return error(
    401,
    'UNAUTHENTICATED',
    'missing or invalid Pub/Sub push OIDC token',
    { reason: check.reason },
    { 'www-authenticate': 'Bearer error="invalid_token"' },
  );
}

/** How the transport settled the delivery, as the HTTP answer Pub/Sub acts on. */
function answer(logger: Logger, settlement: PushSettlement, messageId: string): HttpRouteResponse {
  switch (settlement.kind) {
    case 'no_subscriber':
      logEvent(logger, 'warn', 'pubsub_push_rejected', { status: 503, reason: 'not_consuming' });
      return error(503, 'INTERNAL_ERROR', 'the worker is not consuming; retry later', {
        messageId,
      });
    case 'nacked':
      // The transport logged why (message_handler_failed / message_nacked).
      return error(
        500,
        'INTERNAL_ERROR',
        'the message could not be processed now; Pub/Sub will redeliver it',
        { messageId },
      );
    case 'acked':
      return acked(logger, settlement.outcome, messageId);
  }
}

function acked(
  logger: Logger,
  outcome: HarnessOutcome | undefined,
  messageId: string,
): HttpRouteResponse {
  if (outcome === undefined || outcome.kind === 'invalid') {
    // No outcome: the transport refused it before the harness (its message_invalid line says
    // why: missing/unknown messageType, a body that is not JSON).
    const reason = outcome?.reason ?? 'not_a_step_ready_message';
    logEvent(logger, 'warn', 'pubsub_push_rejected', { status: 400, reason });
    return error(400, 'INVALID_REQUEST', `not a valid step-ready message: ${reason}`, {
      reason,
      messageId,
      ...(outcome?.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
      ...(outcome?.issues === undefined ? {} : { issues: outcome.issues }),
    });
  }
  return {
    status: 200,
    body: {
      messageId,
      outcome: {
        kind: outcome.kind,
        ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
        ...(outcome.status === undefined ? {} : { status: outcome.status }),
        ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
      },
    },
  };
}
