import type { ArtifactStore } from '@tda/artifacts';
import type { FlowRunStore, StepCheckpointStore } from '@tda/flow-store';
import type { MessageBroker } from '@tda/messaging';
import type { Logger } from '@tda/observability';
import type { StepHarnessMetrics } from './harness-metrics';
import type { StepHarnessPolicy } from './harness-policy';
import type { AnyStepHandler } from './step-handler';
import { createWorkerMicroservice, type WorkerMicroservice } from './worker-microservice.factory';
import { WorkerModule } from './worker.module';

export interface StepWorkerOptions {
  /** The one step type this worker serves; its step-ready subscription is consumed. */
  handler: AnyStepHandler;
  store: FlowRunStore;
  /** Where handlers' checkpoints go (ctx.checkpoint). */
  checkpoints?: StepCheckpointStore;
  /** Consumed from (step-ready, unless `subscriber` is given) and published to (step events). */
  broker: MessageBroker;
  /**
   * Where the transport opens its step-ready subscription; default `broker` (streaming pull).
   * bootstrapWorker passes a PushSubscriptionBroker for TDA_INGRESS=push: same transport
   * and harness, deliveries arrive on POST /pubsub/push instead of a pull stream.
   */
  subscriber?: MessageBroker;
  artifacts: ArtifactStore;
  logger: Logger;
  /**
   * Pub/Sub topology prefix (TDA_PUBSUB_PREFIX, default 'tda'). Also the default of
   * `policy.topicPrefix`, so the step events go to the same topology the worker consumes from.
   */
  prefix?: string;
  metrics?: StepHarnessMetrics;
  /** Harness policy (artifact bucket/prefix, timeouts, ...); see DEFAULT_HARNESS_POLICY. */
  policy?: Partial<StepHarnessPolicy>;
  clock?: () => Date;
  /** Lease owner identity; default `worker/<host>/<pid>/<random>`. */
  owner?: string;
  /** Concurrent deliveries (PubSubServer). Default 10. */
  maxInFlight?: number;
  /** 'on-demand': pull only into a free slot (long steps over replicas). Default streaming. */
  delivery?: 'streaming' | 'on-demand';
  /** close(): how long running handlers get before they are aborted. Default 8 s. */
  drainTimeoutMs?: number;
}

/**
 * A single-handler worker: WorkerModule.forRoot with one handler, as a Nest microservice consuming
 * `stepReadySubscription(handler.descriptor.stepType)`, not yet listening (call `app.listen()`). Every worker
 * service is one of these; a service adds only its handler and its config.
 */
export function createStepWorker(options: StepWorkerOptions): Promise<WorkerMicroservice> {
  // Everything but the transport settings is WorkerModule's (adapters, clock, owner, metrics).
  const {
    handler,
    prefix,
    maxInFlight,
    delivery,
    drainTimeoutMs,
    policy,
    subscriber,
    ...moduleOptions
  } = options;
  const harnessPolicy = prefix === undefined ? policy : { topicPrefix: prefix, ...policy };
  return createWorkerMicroservice(
    WorkerModule.forRoot({
      ...moduleOptions,
      handlers: [handler],
      stepTypes: [handler.descriptor.stepType],
      ...(harnessPolicy === undefined ? {} : { policy: harnessPolicy }),
    }),
    {
      broker: subscriber ?? options.broker,
      stepTypes: [handler.descriptor.stepType],
      logger: options.logger,
      ...(prefix === undefined ? {} : { prefix }),
      ...(maxInFlight === undefined ? {} : { maxInFlight }),
      ...(delivery === undefined ? {} : { delivery }),
      ...(drainTimeoutMs === undefined ? {} : { drainTimeoutMs }),
    },
  );
}
