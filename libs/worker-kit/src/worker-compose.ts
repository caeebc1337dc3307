import type { ArtifactStore } from '@tda/artifacts';
import type { EnvSource } from '@tda/config';
import type { FlowRunStore, StepCheckpointStore } from '@tda/flow-store';
import type { MessageBroker } from '@tda/messaging';
import type { Logger } from '@tda/observability';
import type { StepHarnessMetrics } from './harness-metrics';
import type { StepHarnessPolicy } from './harness-policy';
import type { AnyStepHandler } from './step-handler';
import { createStepWorker } from './step-worker.factory';
import {
  deliveryOf,
  maxInFlightOf,
  prepareWorker,
  type WorkerDefinition,
  type WorkerRuntime,
} from './worker-definition';
import { stepWorkerSettings, type WorkerServiceConfig } from './worker-env';
import type { WorkerMicroservice } from './worker-microservice.factory';

export interface ComposeWorkerOptions<O> {
  env: EnvSource;
  store: FlowRunStore;
  broker: MessageBroker;
  artifacts: ArtifactStore;
  /** Where handlers' checkpoints go (the run store's StepCheckpointStore). */
  checkpoints?: StepCheckpointStore;
  logger: Logger;
  metrics?: StepHarnessMetrics;
  overrides?: O;
  /** A test's policy over the service's (short leases), checked like TDA_STEP_*. */
  policy?: Partial<StepHarnessPolicy>;
  /** Wraps the built handler (fault injection). */
  decorate?: (handler: AnyStepHandler) => AnyStepHandler;
}

export interface ComposedWorker<H extends AnyStepHandler> {
  worker: WorkerMicroservice;
  runtime: WorkerRuntime<H>;
  /** Drains and stops the worker, then closes what its runtime opened. */
  close(): Promise<void>;
}

/**
 * A worker built from its definition over adapters the caller owns: what a local launcher that
 * runs every service in one process (npm start) does for each worker, through the same
 * prepareWorker steps as the worker's own main — same config schema, same policy rules, same
 * handler. Not listening yet: call `worker.app.listen()`.
 */
export async function composeWorker<C extends WorkerServiceConfig, H extends AnyStepHandler, O>(
  definition: WorkerDefinition<C, H, O>,
  options: ComposeWorkerOptions<O>,
): Promise<ComposedWorker<H>> {
  const { config, runtime, stepPolicy } = await prepareWorker(definition, {
    env: options.env,
    logger: () => options.logger,
    overrides: options.overrides,
    policy: options.policy,
  });
  try {
    const settings = stepWorkerSettings(config);
    const worker = await createStepWorker({
      handler: options.decorate?.(runtime.handler) ?? runtime.handler,
      store: options.store,
      broker: options.broker,
      artifacts: options.artifacts,
      ...(options.checkpoints === undefined ? {} : { checkpoints: options.checkpoints }),
      logger: options.logger,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      prefix: settings.prefix,
      policy: { ...settings.policy, ...stepPolicy },
      ...maxInFlightOf(runtime.maxInFlight),
      ...deliveryOf(runtime),
    });
    return {
      worker,
      runtime,
      close: async () => {
        try {
          await worker.app.close();
        } finally {
          await runtime.close?.();
        }
      },
    };
  } catch (error) {
    await runtime.close?.().catch(() => undefined);
    throw error;
  }
}
