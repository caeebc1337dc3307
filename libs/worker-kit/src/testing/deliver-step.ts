import type { FlowStep, StepType } from '@tda/contracts';
import { isTerminalStepStatus } from '@tda/flow-engine';
import type { FlowRunStore } from '@tda/flow-store';
import { BrokerPublisher, type MessageBroker } from '@tda/messaging';
import { expectEventually } from '@tda/test-support';
import { expect } from 'vitest';

export interface DeliverStepOptions {
  /** Where to watch the step (default: the worker's own store). */
  store?: Pick<FlowRunStore, 'get'>;
  timeoutMs?: number;
}

/**
 * Publishes a step-ready message for one step on a booted worker's own broker and prefix, as the
 * orchestrator would, and waits until the step is final in the store; returns it. The run and
 * its upstream artifacts must already be in the worker's backends.
 */
export async function deliverStep(
  worker: {
    backends: { store: Pick<FlowRunStore, 'get'>; broker: MessageBroker };
    config: { TDA_PUBSUB_PREFIX: string };
  },
  target: { runId: string; stepId: string; stepType: StepType },
  options: DeliverStepOptions = {},
): Promise<FlowStep> {
  const store = options.store ?? worker.backends.store;
  await new BrokerPublisher({
    publisher: worker.backends.broker,
    prefix: worker.config.TDA_PUBSUB_PREFIX,
  }).publishStepReady({ ...target, attempt: 0, dispatchedAt: new Date().toISOString() });
  let step: FlowStep | undefined;
  await expectEventually(
    async () => {
      step = (await store.get(target.runId))?.run.steps[target.stepId];
      expect(step !== undefined && isTerminalStepStatus(step.status), step?.status).toBe(true);
    },
    { timeoutMs: options.timeoutMs ?? 20_000 },
  );
  if (step === undefined) throw new Error(`step ${target.stepId} vanished`);
  return step;
}
