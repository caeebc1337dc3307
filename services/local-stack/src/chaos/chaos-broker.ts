import {
  MESSAGE_TYPES,
  type MessageBroker,
  type MessageListener,
  type OutgoingMessage,
  type SubscribeOptions,
  type SubscriptionHandle,
} from '@tda/messaging';
import type { ChaosController } from './chaos-controller';

export interface ChaosBrokerOptions {
  chaos: ChaosController;
  /** Which service publishes through this broker (the orchestrator's publishes can be lost). */
  service: string;
}

/**
 * A MessageBroker decorator for the chaos suite. For runs whose plan says so it:
 * - loses the orchestrator's first step-ready publish of the planned step (the orchestrator
 *   "died" after its READY write and before its publish: the call returns as if it had been
 *   sent, nothing reaches Pub/Sub, the reconciler must republish);
 * - duplicates step-ready and step-event messages (extra copies after a seeded delay) and holds
 *   some originals back, so that later messages overtake them (reordering).
 * Subscriptions and seek go to the real broker unchanged.
 */
export class ChaosBroker implements MessageBroker {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly inner: MessageBroker,
    private readonly options: ChaosBrokerOptions,
  ) {}

  async publish(topic: string, message: OutgoingMessage): Promise<string> {
    const { chaos, service } = this.options;
    const attributes = message.attributes ?? {};
    const type = attributes['messageType'];
    const runId = attributes['runId'];
    const stepId = attributes['stepId'] ?? '';
    const plan = chaos.planFor(runId);
    if (plan === undefined || runId === undefined) return this.inner.publish(topic, message);
    const isStepReady = type === MESSAGE_TYPES.stepReady;
    const isStepEvent = type === MESSAGE_TYPES.stepEvent;

    if (
      service === 'orchestrator' &&
      isStepReady &&
      plan.crash?.stepId === stepId &&
      chaos.next(`crash:${runId}`) === 0
    ) {
      chaos.record({ kind: 'orchestrator_crash', runId, stepId, action: 'publish_lost' });
      return `chaos-lost-${runId}-${stepId}`;
    }

    const duplicates = plan.duplicates;
    if (duplicates === undefined || !(isStepReady || isStepEvent)) {
      return this.inner.publish(topic, message);
    }
    const occurrence = chaos.next(`dup:${service}:${type}:${runId}:${stepId}`);
    const random = chaos.random(`dup:${service}:${type}:${runId}:${stepId}:${occurrence}`);
    for (let copy = 1; copy <= duplicates.copies; copy += 1) {
      const delayMs = 20 + Math.floor(random() * duplicates.maxDelayMs);
      this.later(delayMs, topic, message);
      chaos.record({
        kind: 'duplicate_reorder',
        runId,
        stepId,
        action: 'duplicate',
        detail: { messageType: type, delayMs, service },
      });
    }
    // Half of the originals are held back, so that the copies or other messages overtake them.
    if (random() < 0.5) {
      const holdMs = 50 + Math.floor(random() * duplicates.maxDelayMs);
      chaos.record({
        kind: 'duplicate_reorder',
        runId,
        stepId,
        action: 'delayed',
        detail: { messageType: type, holdMs, service },
      });
      await new Promise((resolve) => setTimeout(resolve, holdMs));
    }
    return this.inner.publish(topic, message);
  }

  subscribe(
    subscription: string,
    onMessage: MessageListener,
    options: SubscribeOptions,
  ): Promise<SubscriptionHandle> {
    return this.inner.subscribe(subscription, onMessage, options);
  }

  seek(subscription: string, time: Date): Promise<void> {
    return this.inner.seek(subscription, time);
  }

  /** Waits for the scheduled copies (the suite drains them before it judges the runs). */
  async drain(): Promise<void> {
    while (this.timers.size > 0 || this.inFlight.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Drops copies not sent yet; the real broker is closed by its owner (the backends). */
  close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    return Promise.resolve();
  }

  private later(delayMs: number, topic: string, message: OutgoingMessage): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const sent = this.inner
        .publish(topic, message)
        // A copy that cannot be published (e.g. after shutdown) is a lost duplicate, no failure.
        .catch(() => undefined)
        .finally(() => this.inFlight.delete(sent));
      this.inFlight.add(sent);
    }, delayMs);
    this.timers.add(timer);
  }
}
