import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { validate, type FlowRun, type StepEventMessage } from '@tda/contracts';
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
import { indexKindOf } from '../index/index-entry.builder';
import { IndexWriter, type IndexStepOutcome } from '../index/index-writer.service';
import { METRICS } from '../orchestrator.tokens';
import { RunAdmission } from '../runs/run-admission.service';
import { EvaluationsService } from '../evaluations/evaluations.service';
import { SignalEmitter } from '../schedules/signal-emitter.service';

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
 * The one thing it does not repeat is the index entry of a SUCCEEDED LLM step (written here after
 * the advance): an entry missed that way is written by POST /admin/index/backfill.
 */
@Controller()
export class StepEventsHandler {
  constructor(
    private readonly writer: RunWriter,
    private readonly admission: RunAdmission,
    private readonly index: IndexWriter,
    private readonly signals: SignalEmitter,
    private readonly evaluations: EvaluationsService,
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
    const indexed = await this.indexFinished(event, outcome.run);
    // Flow 7: a scheduled run that just SUCCEEDED emits its signal (or is marked filtered), once;
    // a failure throws (nack) and the redelivery decides again.
    await this.signals.afterRun(outcome.run);
    // A walk-forward evaluation's run ended: its window takes the next point (a failure nacks).
    await this.evaluations.afterRun(outcome.run);
    const published = outcome.dispatched.length;
    if (outcome.kind === 'noop') {
      if (indexed?.outcome === 'created') return processed(`indexed ${indexed.id}`);
      return published > 0 ? processed(`republished ${published}`) : noop('already_advanced');
    }
    return processed(`advanced to ${outcome.run.status}; dispatched ${published}`);
  }

  /**
   * The index entry of a SUCCEEDED LLM step (IndexWriter: the orchestrator is its only writer,
   * create-only under a deterministic id). After the advance, so an index outage never delays
   * the next steps; also when the advance was a noop, because that is what a redelivery after a
   * failed index write sees. A failure throws: nack, and the redelivery writes it (or finds it).
   */
  private async indexFinished(
    event: Pick<StepEventMessage, 'stepId' | 'stepType' | 'status'>,
    run: FlowRun,
  ): Promise<IndexStepOutcome | undefined> {
    if (event.status !== 'SUCCEEDED' || indexKindOf(event.stepType) === undefined) return undefined;
    return this.index.indexStep(run, event.stepId);
  }
}
