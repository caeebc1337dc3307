import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun, StepReadyMessage } from '@tda/contracts';
import { stepOf } from '@tda/flow-engine';
import { BrokerPublisher, stepReadyTopic, type Publisher } from '@tda/messaging';
import { describeError, logEvent, type Logger, type TdaMetrics } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import { StepDispatchError } from '../orchestrator.errors';
import {
  CLOCK,
  LOGGER,
  MESSAGE_BROKER,
  METRICS,
  ORCHESTRATOR_CONFIG,
  type Clock,
} from '../orchestrator.tokens';

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
  private readonly prefix: string;

  constructor(
    @Inject(MESSAGE_BROKER) broker: Publisher,
    @Inject(ORCHESTRATOR_CONFIG) config: Pick<OrchestratorConfig, 'TDA_PUBSUB_PREFIX'>,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) private readonly metrics: Pick<TdaMetrics, 'stepsDispatched'>,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.prefix = config.TDA_PUBSUB_PREFIX;
    this.publisher = new BrokerPublisher({ publisher: broker, prefix: this.prefix, logger });
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
    const dispatchedAt = this.clock().toISOString();
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
        this.metrics.stepsDispatched.inc({ stepType: step.stepType, reason });
        logEvent(this.logger, 'info', 'step_dispatched', {
          runId: run.runId,
          stepId,
          stepType: step.stepType,
          attempt: step.attempt,
          reason,
          topic: stepReadyTopic(step.stepType, this.prefix),
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
        this.logger,
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
