import type { StepReadyMessage, StepType } from '@tda/contracts';
import { selectExecutableStep } from '@tda/flow-engine';
import { DEFAULT_FLOW_RUNS_COLLECTION, type FlowRunStore } from '@tda/flow-store';
import { logEvent, sanitizeForLog, withLogContext, type Logger } from '@tda/observability';
import {
  isFirestoreRunEventType,
  runIdFromSubject,
  type CloudEventAttributes,
} from './cloud-event';
import type { HarnessOutcome } from './harness-outcome';
import type { DeliveryMeta } from './step-harness';

/** What the ingress needs of the step harness (a StepHarness; a fake in unit tests). */
export interface StepReadyTarget {
  readonly stepType: StepType;
  handleStepReady(body: unknown, meta: DeliveryMeta): Promise<HarnessOutcome>;
}

export interface CloudEventIngressOptions {
  harness: StepReadyTarget;
  /** Read-only here: the ingress loads the run to pick the step; every write is the harness's. */
  store: Pick<FlowRunStore, 'get'>;
  logger: Logger;
  /** The runs collection named in event subjects (default `flow_runs`). */
  collection?: string;
  clock?: () => Date;
}

/**
 * How one CloudEvent was settled. Every kind is a success for the sender (HTTP 200: Eventarc
 * must not redeliver a decided event); a transient failure is thrown instead (HTTP 500, retried).
 * - ignored:    not an event about a run document (unsupported type, invalid subject).
 * - noop:       about a run, but nothing to execute (seed 002 scenario A); nothing written.
 * - dispatched: an executable step was handed to the harness; `outcome` is the harness's.
 */
export type CloudEventOutcome =
  | { kind: 'ignored'; reason: 'unsupported_event_type' | 'invalid_subject' }
  | { kind: 'noop'; reason: 'run_not_found' | 'no_executable_step'; runId: string }
  | { kind: 'dispatched'; runId: string; stepId: string; outcome: HarnessOutcome };

/**
 * seed 002 ingress: a Firestore CloudEvent (Eventarc `document.updated` on `flow_runs/{runId}`)
 * wakes the worker; it reads the run, selects the executable step of its type with the lowest
 * stepId, and runs the same harness as a step-ready message (claim precondition, recovery,
 * finalize). Step-ready messages and CloudEvents can both arrive for one step: the claim makes
 * exactly one of them execute it, the other is a no-op.
 */
export class CloudEventIngress {
  private readonly collection: string;
  private readonly clock: () => Date;

  constructor(private readonly options: CloudEventIngressOptions) {
    this.collection = options.collection ?? DEFAULT_FLOW_RUNS_COLLECTION;
    this.clock = options.clock ?? (() => new Date());
  }

  get stepType(): StepType {
    return this.options.harness.stepType;
  }

  handle(event: CloudEventAttributes): Promise<CloudEventOutcome> {
    // The id is a CloudEvent attribute (bounded by the parser), used for correlation only.
    return withLogContext({ cloudEventId: event.id }, () => this.process(event));
  }

  private async process(event: CloudEventAttributes): Promise<CloudEventOutcome> {
    // Subjects are document paths (no payload), but they come from outside: bound their length.
    const subject =
      event.subject === undefined
        ? undefined
        : sanitizeForLog(event.subject, { maxStringLength: 256 });
    const eventType = sanitizeForLog(event.type, { maxStringLength: 128 });
    logEvent(this.options.logger, 'info', 'cloud_event_received', { eventType, subject });
    if (!isFirestoreRunEventType(event.type)) {
      return this.ignored('unsupported_event_type', eventType, subject);
    }
    const runId = runIdFromSubject(event.subject, this.collection);
    if (runId === undefined) return this.ignored('invalid_subject', eventType, subject);
    return withLogContext({ runId }, async () => {
      // A read error is transient: it propagates (HTTP 500) so Eventarc redelivers.
      const current = await this.options.store.get(runId);
      if (current === null) return this.noop('run_not_found', runId);
      const selected = selectExecutableStep(current.run, this.stepType);
      if (selected === undefined) return this.noop('no_executable_step', runId);
      const message: StepReadyMessage = {
        runId,
        stepId: selected.stepId,
        stepType: this.stepType,
        attempt: selected.step.attempt ?? 0,
        dispatchedAt: this.clock().toISOString(),
      };
      // Eventarc does not expose a delivery count; 1 keeps the harness's redelivery bound for
      // step-ready messages out of the way (the step's own attempt counter still bounds retries).
      const outcome = await this.options.harness.handleStepReady(message, {
        deliveryAttempt: 1,
        messageId: event.id,
      });
      return { kind: 'dispatched', runId, stepId: selected.stepId, outcome };
    });
  }

  private ignored(
    reason: 'unsupported_event_type' | 'invalid_subject',
    eventType: unknown,
    subject: unknown,
  ): CloudEventOutcome {
    logEvent(this.options.logger, 'warn', 'cloud_event_ignored', { reason, eventType, subject });
    return { kind: 'ignored', reason };
  }

  private noop(reason: 'run_not_found' | 'no_executable_step', runId: string): CloudEventOutcome {
    logEvent(this.options.logger, 'info', 'cloud_event_noop', {
      reason,
      stepType: this.stepType,
    });
    return { kind: 'noop', reason, runId };
  }
}
