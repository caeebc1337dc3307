import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun, StepReadyMessage } from '@tda/contracts';
import { stepOf } from '@tda/flow-engine';
import { BrokerPublisher, stepReadyTopic } from '@tda/messaging';
import { describeError, logEvent } from '@tda/observability';
import { StepDispatchError } from '../orchestrator.errors';
import { ORCHESTRATOR_CONTEXT, type OrchestratorContext } from '../orchestrator.options';

export type DispatchReason = NonNullable<StepReadyMessage['reason']>;

export interface DispatchRequest {
  stepId: string;
  reason: DispatchReason;
}

export interface DispatchedStep {
  stepId: string;
  messageId: string;
  reason: DispatchReason;
}

/**
 * Publishes step-ready messages (DESIGN §4) to the stepType's topic. Only for steps that are
 * READY in the run as written: a message is a hint, the worker re-reads the run and decides, so
 * a duplicate is harmless but a message for a step that is not READY would be pure noise.
 */
@Injectable()
export class StepDispatcher {
  private readonly publisher: BrokerPublisher;

  constructor(@Inject(ORCHESTRATOR_CONTEXT) private readonly context: OrchestratorContext) {
    this.publisher = new BrokerPublisher({
      publisher: context.broker,
      prefix: context.config.TDA_PUBSUB_PREFIX,
      logger: context.logger,
    });
  }

  /**
   * Publishes one message per requested READY step, all of them even if some fail; then throws
   * StepDispatchError naming the failed steps (the caller nacks, or leaves them to the
   * reconciler's republish of stale READY steps).
   */
  async dispatch(run: FlowRun, requests: readonly DispatchRequest[]): Promise<DispatchedStep[]> {
    const seen = new Set<string>();
    const work = requests.filter(({ stepId }) => {
      if (seen.has(stepId)) return false;
      seen.add(stepId);
      return stepOf(run, stepId)?.status === 'READY';
    });
    const dispatchedAt = this.context.clock().toISOString();
    const results = await Promise.allSettled(
      work.map(async ({ stepId, reason }): Promise<DispatchedStep> => {
        const step = stepOf(run, stepId);
        if (step === undefined) throw new Error(`step ${stepId} vanished`);
        const message: StepReadyMessage = {
          runId: run.runId,
          stepId,
          stepType: step.stepType,
          attempt: step.attempt,
          dispatchedAt,
          reason,
        };
        const messageId = await this.publisher.publishStepReady(message);
        this.context.metrics.stepsDispatched.inc({ stepType: step.stepType, reason });
        logEvent(this.context.logger, 'info', 'step_dispatched', {
          runId: run.runId,
          stepId,
          stepType: step.stepType,
          attempt: step.attempt,
          reason,
          topic: stepReadyTopic(step.stepType, this.context.config.TDA_PUBSUB_PREFIX),
          messageId,
        });
        return { stepId, messageId, reason };
      }),
    );
    const dispatched: DispatchedStep[] = [];
    const failed: string[] = [];
    const causes: unknown[] = [];
    results.forEach((result, index) => {
      const stepId = work[index]?.stepId ?? '?';
      if (result.status === 'fulfilled') dispatched.push(result.value);
      else {
        failed.push(stepId);
        causes.push(result.reason);
      }
    });
    if (failed.length > 0) {
      logEvent(
        this.context.logger,
        'warn',
        'dispatch_failed',
        { runId: run.runId, failedStepIds: failed, error: describeError(causes[0]) },
        'step-ready publish failed',
      );
      throw new StepDispatchError(run.runId, failed, causes);
    }
    return dispatched;
  }
}
