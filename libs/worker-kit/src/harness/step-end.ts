import type { ErrorCode, ErrorInfo, FlowRun, FlowStep, StepType } from '@tda/contracts';
import type { FinalizeOutcome } from '@tda/flow-engine';
import type { VersionedRun } from '@tda/flow-store';

export interface DeliveryMeta {
  /** 1-based delivery count of this message (PubSubContext.getDeliveryAttempt()). */
  deliveryAttempt: number;
  messageId?: string;
}

/** The step-ready message, validated, plus the delivery it came with. */
export interface StepTarget {
  runId: string;
  stepId: string;
  stepType: StepType;
  meta: DeliveryMeta;
}

/**
 * How the finalize is written: `owner` for a step this delivery claimed (lease owner only),
 * `takeover` for a RUNNING step of an expired or orphaned lease finalized in one write.
 */
export type FinalizeMode = 'owner' | 'takeover';

/** A step this delivery holds: claimed (READY → RUNNING) or taken over. */
export interface ClaimedStep {
  run: FlowRun;
  /** The version `run` was written at by this delivery's claim; the finalize starts from it. */
  version?: string;
  step: FlowStep;
  attempt: number;
  startedAt: string;
  via: 'claim' | 'takeover';
  /** The run's deadline (ms), as the claim decision parsed it. */
  runDeadlineMs?: number;
  /** The claim decision found the run already past its deadline: stop before any work. */
  runDeadlinePassed: boolean;
  /** The primary artifact is known absent (or refused by recovery): skip the recovery check. */
  artifactChecked: boolean;
}

/**
 * What one delivery decided, before it is reported. Every path of the harness ends in one of
 * these and goes through the Finalizer (the one exit): `finalize` writes the step's final status
 * and publishes the step event; `report` publishes the event of a final status the claim already
 * wrote; `noop` / `invalid` / `lease_lost` write nothing and ack with a log line.
 */
export type StepEnd =
  | {
      kind: 'finalize';
      outcome: FinalizeOutcome;
      attempt: number;
      mode: FinalizeMode;
      /** Handler tries in this delivery (0: the handler did not run). */
      tries?: number;
      recoveredVia?: 'handler' | 'artifact';
      /** The run as the claim left it: the finalize decides on it before reading (if stale). */
      known?: VersionedRun;
      /** Logged with step_failed (describeError of an unexpected error). */
      cause?: unknown;
    }
  | { kind: 'report'; status: 'FAILED'; error: ErrorInfo; attempt: number }
  | { kind: 'noop'; reason: string; fields?: Record<string, unknown>; silent?: boolean }
  | {
      kind: 'invalid';
      reason: string;
      errorCode?: ErrorCode;
      issues?: unknown;
      fields?: Record<string, unknown>;
    }
  | {
      kind: 'lease_lost';
      detail: Record<string, unknown> | undefined;
      tries: number;
      attempt: number;
    };

/** The step attempt an end is about, when it is about one (its log lines carry it). */
export function attemptOf(end: StepEnd): number | undefined {
  return end.kind === 'finalize' || end.kind === 'report' || end.kind === 'lease_lost'
    ? end.attempt
    : undefined;
}

export function noopEnd(
  reason: string,
  fields?: Record<string, unknown>,
  silent?: boolean,
): Extract<StepEnd, { kind: 'noop' }> {
  return {
    kind: 'noop',
    reason,
    ...(fields === undefined ? {} : { fields }),
    ...(silent === undefined ? {} : { silent }),
  };
}
