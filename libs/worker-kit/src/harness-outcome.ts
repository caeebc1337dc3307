import type { ErrorCode, StepStatus } from '@tda/contracts';
import { invalidMessage, noop, processed, type HandlerOutcome } from '@tda/messaging';

/**
 * How the harness settled one step-ready delivery. It always means ACK; every transient
 * infrastructure failure (store unavailable, conflict retries exhausted, artifact write still
 * failing after local retries, shutdown mid-step) is THROWN instead, so the transport nacks and
 * Pub/Sub redelivers.
 *
 * - executed:  the handler ran and the step was finalized SUCCEEDED.
 * - recovered: the step was finalized from an artifact a previous attempt had already written,
 *              without executing the handler again (seed 002 split-brain).
 * - failed:    the step was finalized FAILED or CANCELLED (bad inputs, handler error, timeout,
 *              cancel, retries exhausted, unknown dependencies).
 * - noop:      nothing to do and nothing written (duplicate, not READY, run not RUNNING, held by
 *              another worker, lease lost mid-step, ...). `reason` says which.
 * - invalid:   the message itself is unusable (schema, storage-unsafe stepId, no handler).
 */
export interface HarnessOutcome {
  action: 'ack';
  kind: 'executed' | 'noop' | 'invalid' | 'recovered' | 'failed';
  /** Machine-readable reason for noop/invalid (e.g. 'not_ready', 'already_running'). */
  reason?: string;
  /** The status this delivery wrote, when it finalized the step. */
  status?: StepStatus;
  errorCode?: ErrorCode;
  /** step.attempt of the execution (claims so far). */
  attempt?: number;
  /** Handler tries in this delivery (retryable StepErrors are retried in-process). */
  tries?: number;
  /** false when the step event could not be published after the finalize (see README). */
  stepEventPublished?: boolean;
  /** Validation issues of an invalid message (paths and messages, no payload). */
  issues?: unknown;
}

/** HarnessOutcome → the transport's HandlerOutcome (all ack; the log line says why). */
export function toHandlerOutcome(outcome: HarnessOutcome): HandlerOutcome {
  switch (outcome.kind) {
    case 'invalid':
      return invalidMessage(outcome.reason ?? 'invalid_message', outcome.issues);
    case 'noop':
      return noop(outcome.reason ?? 'noop');
    default: {
      const parts: string[] = [outcome.kind];
      if (outcome.status !== undefined) parts.push(outcome.status);
      if (outcome.errorCode !== undefined) parts.push(outcome.errorCode);
      return processed(parts.join(':'));
    }
  }
}
