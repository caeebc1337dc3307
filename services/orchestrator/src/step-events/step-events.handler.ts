import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { validate, type FlowRun } from '@tda/contracts';
import {
  DEFAULT_MAX_DELIVERY_ATTEMPTS,
  invalidMessage,
  MESSAGE_TYPES,
  noop,
  processed,
  PUBSUB_TRANSPORT,
  type HandlerOutcome,
  PubSubContext,
} from '@tda/messaging';
import type { TdaMetrics } from '@tda/observability';
import { advanceDecision } from '../dispatch/advance.decision';
import { RunWriter } from '../dispatch/run-writer.service';
import { METRICS } from '../orchestrator.tokens';
import { RunAdmission } from '../runs/run-admission.service';

/** READY steps that depend on `stepId`: the ones its SUCCEEDED event may have made READY. */
export function readyDependents(run: FlowRun, stepId: string): string[] {
  return Object.entries(run.steps)
    .filter(([, step]) => step.status === 'READY' && step.dependsOn.includes(stepId))
    .map(([id]) => id)
    .sort();
}

/**
 * Consumes step events (worker -> orchestrator, DESIGN §4/§5.2): validate, advance the run
 * through RunWriter (read -> advance -> conditional write -> step-ready for newly READY steps).
 *
 * Settlement: a duplicate event yields an empty patch -> noop ack; an invalid body -> ack as
 * invalid (it can never succeed); a failure to write or publish throws -> nack, so the event is
 * redelivered and the advance decided again. On a redelivery the READY dependents of the step
 * are published again, because the first delivery may have written the advance and then failed
 * to publish (a second message is harmless: workers claim with preconditions). After
 * DEFAULT_MAX_DELIVERY_ATTEMPTS deliveries the event is acked and left to the reconciler, which
 * repeats everything an event does (the emulator never dead-letters, so the bound is in code).
 */
@Controller()
export class StepEventsHandler {
  constructor(
    private readonly writer: RunWriter,
    private readonly admission: RunAdmission,
    @Inject(METRICS) private readonly metrics: Pick<TdaMetrics, 'messagesHandled'>,
  ) {}

  @EventPattern(MESSAGE_TYPES.stepEvent, PUBSUB_TRANSPORT)
  async handle(@Payload() body: unknown, @Ctx() ctx: PubSubContext): Promise<HandlerOutcome> {
    const subscription = ctx.getSubscription();
    try {
      const outcome = await this.decide(body, ctx);
      this.metrics.messagesHandled.inc({
        subscription,
        outcome: outcome.outcome === 'invalid' ? 'invalid' : 'ack',
      });
      return outcome;
    } catch (error) {
      this.metrics.messagesHandled.inc({ subscription, outcome: 'nack' });
      throw error;
    }
  }

  private async decide(body: unknown, ctx: PubSubContext): Promise<HandlerOutcome> {
    const checked = validate.stepEvent(body);
    if (!checked.ok) return invalidMessage('step_event violates the contract', checked.issues);
    const event = checked.value;
    const deliveryAttempt = ctx.getDeliveryAttempt();
    if (deliveryAttempt > DEFAULT_MAX_DELIVERY_ATTEMPTS) {
      return noop(`delivery attempt ${deliveryAttempt}: left to the reconciler`);
    }
    // Nack on a publish failure ('throw'): the redelivery republishes the READY dependents.
    const outcome = await this.writer.apply(
      event.runId,
      (run, now) =>
        advanceDecision(run, now, deliveryAttempt > 1 ? readyDependents(run, event.stepId) : []),
      'step_event',
      'throw',
    );
    if (outcome.kind === 'not_found') return noop('run_not_found');
    // The run just ended: its slot goes to the oldest admissible queued run (errors are logged;
    // the reconciler's pass admits at the latest).
    if (outcome.result.termination !== undefined)
      await this.admission.admitQueuedSafely('step_event');
    const published = outcome.dispatched.length;
    if (outcome.kind === 'noop') {
      return published > 0 ? processed(`republished ${published}`) : noop('already_advanced');
    }
    return processed(`advanced to ${outcome.run.status}; dispatched ${published}`);
  }
}
