import { createBackends, type Backends } from '@tda/backends';
import type { EnvSource } from '@tda/config';
import { stepReadySubscription } from '@tda/messaging';
import {
  createLogger,
  createMetrics,
  describeError,
  logEvent,
  type Logger,
  type TdaMetrics,
} from '@tda/observability';
import {
  GoogleIdTokenVerifier,
  runServiceMain,
  startHealthServer,
  type HealthServer,
  type HttpRoute,
  type IdTokenVerifier,
} from '@tda/service-runtime';
import type { StepHarnessPolicy } from './harness-policy';
import { PUBSUB_PUSH_PATH, pubSubPushRoute } from './pubsub-push.route';
import { PushSubscriptionBroker } from './pubsub-push.subscriber';
import { StepHarnessRegistry } from './step-harness.registry';
import type { AnyStepHandler } from './step-handler';
import { createStepWorker } from './step-worker.factory';
import {
  deliveryOf,
  maxInFlightOf,
  prepareWorker,
  type PreparedWorker,
  type WorkerDefinition,
} from './worker-definition';
import { stepWorkerSettings, type WorkerServiceConfig } from './worker-env';
import { workerIngress, type WorkerIngress } from './worker-ingress';
import type { WorkerMicroservice } from './worker-microservice.factory';

export interface BootstrapWorkerOptions<O = never> {
  /** Environment to validate; default the process environment (read by @tda/config only). */
  env?: EnvSource;
  /** Default: a Cloud Logging JSON logger at TDA_LOG_LEVEL. */
  logger?: Logger;
  /** The worker's test hooks (WorkerDefinition.create gets them). */
  overrides?: O;
  /** A test's harness policy over the service's (short leases), checked the same way. */
  policy?: Partial<StepHarnessPolicy>;
  /** Wraps the built handler (the chaos suite counts executions). */
  decorate?: (handler: AnyStepHandler) => AnyStepHandler;
  maxInFlight?: number;
  drainTimeoutMs?: number;
  /** How the adapters are built; default @tda/backends createBackends (tests count closes). */
  createBackends?: (config: WorkerServiceConfig) => Promise<Backends>;
  /**
   * TDA_INGRESS=push: how POST /pubsub/push authenticates. Default a GoogleIdTokenVerifier for
   * TDA_PUSH_AUDIENCE / TDA_PUSH_SERVICE_ACCOUNT on Google's keys; tests pass one on local keys.
   */
  pushVerifier?: IdTokenVerifier;
}

export interface WorkerServiceHandle<
  C extends WorkerServiceConfig = WorkerServiceConfig,
  H extends AnyStepHandler = AnyStepHandler,
> {
  config: C;
  logger: Logger;
  handler: H;
  metrics: TdaMetrics;
  backends: Backends;
  worker: WorkerMicroservice;
  health: HealthServer;
  /**
   * Drains the transport and aborts what still runs, closes the adapters, the health port and
   * what the worker's runtime opened. Every step is attempted; the first failure is rethrown.
   * Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/** Runs every step even when one fails, then throws the first failure. */
async function closeAll(steps: readonly (() => Promise<void>)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/** A worker service's `main.ts`: `void runWorker(definition)`. */
export function runWorker<C extends WorkerServiceConfig, H extends AnyStepHandler>(
  definition: WorkerDefinition<C, H>,
): Promise<unknown> {
  if (definition.isThread?.() === true) return Promise.resolve(undefined);
  return runServiceMain({
    service: definition.descriptor.service,
    boot: () => bootstrapWorker(definition),
  });
}

/**
 * The standalone boot of a worker service: config (its schema) → logger → the step policy it
 * asks for → its handler (before any backend opens, so a broken config or package fails cheaply)
 * → backends for TDA_BACKEND → a single-handler worker consuming its step-ready subscription
 * (TDA_INGRESS: a streaming pull, or deliveries on POST /pubsub/push) → /healthz, /metrics and
 * the ingress route on PORT → `service_started`. Anything that fails after something was opened
 * closes it before the error is rethrown: a failed boot leaves no client or port behind.
 */
export async function bootstrapWorker<C extends WorkerServiceConfig, H extends AnyStepHandler, O>(
  definition: WorkerDefinition<C, H, O>,
  options: BootstrapWorkerOptions<O> = {},
): Promise<WorkerServiceHandle<C, H>> {
  const { service } = definition.descriptor;
  let logger = options.logger;
  const prepared = await prepareWorker(definition, {
    env: options.env,
    logger: (config) =>
      (logger ??= createLogger({
        service,
        level: config.TDA_LOG_LEVEL,
        projectId: config.GOOGLE_CLOUD_PROJECT,
      })),
    overrides: options.overrides,
    policy: options.policy,
  });
  const log = logger ?? createLogger({ service });
  try {
    return await startWorker(service, prepared, log, options);
  } catch (error) {
    await prepared.runtime.close?.().catch(() => undefined);
    throw error;
  }
}

async function startWorker<C extends WorkerServiceConfig, H extends AnyStepHandler, O>(
  service: string,
  prepared: PreparedWorker<C, H>,
  logger: Logger,
  options: BootstrapWorkerOptions<O>,
): Promise<WorkerServiceHandle<C, H>> {
  const { config, runtime } = prepared;
  const handler = runtime.handler;
  const ingress = workerIngress(service, config);
  const metrics = createMetrics({ service });
  const backends = await (options.createBackends ?? createBackends)(config);
  // What to undo, newest first, if a later boot step fails.
  const undo: (() => Promise<void>)[] = [() => backends.close()];
  try {
    const push = pushIngress(ingress, backends, options.pushVerifier);
    const settings = stepWorkerSettings(config);
    const worker = await createStepWorker({
      handler: options.decorate?.(handler) ?? handler,
      store: backends.store,
      checkpoints: backends.checkpoints,
      broker: backends.broker,
      ...(push === undefined ? {} : { subscriber: push.subscriber }),
      artifacts: backends.artifacts,
      logger,
      metrics,
      prefix: settings.prefix,
      policy: { ...settings.policy, ...prepared.stepPolicy },
      ...maxInFlightOf(options.maxInFlight ?? runtime.maxInFlight),
      ...deliveryOf(runtime),
      ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
    });
    undo.unshift(() => worker.app.close());
    await worker.app.listen();
    const routes: HttpRoute[] =
      push === undefined
        ? []
        : [
            pubSubPushRoute({
              ...push,
              subscription: stepReadySubscription(handler.descriptor.stepType, settings.prefix),
              logger,
            }),
          ];
    const health = await startHealthServer({ port: config.PORT, metrics, routes });
    logStarted(logger, { prepared, worker, health, backends, ingress });
    const handle = { config, logger, handler, metrics, backends, worker, health };
    return { ...handle, close: closeOnce(handle, runtime) };
  } catch (error) {
    await closeAll(undo).catch((cleanupError: unknown) => {
      logEvent(logger, 'warn', 'service_failed', {
        stage: 'boot_cleanup',
        error: describeError(cleanupError),
      });
    });
    throw error;
  }
}

/** close(): worker (drain, then abort), backends, health port, runtime; once, every step tried. */
function closeOnce(
  handle: Pick<WorkerServiceHandle, 'worker' | 'backends' | 'health'>,
  runtime: { close?(): Promise<void> },
): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= closeAll([
      () => handle.worker.app.close(),
      () => handle.backends.close(),
      () => handle.health.close(),
      async () => runtime.close?.(),
    ]);
    return closing;
  };
}

/**
 * Push: the transport subscribes to an in-process source fed by POST /pubsub/push, so no
 * streaming pull is opened (a Cloud Run Service has no CPU between requests).
 */
function pushIngress(
  ingress: WorkerIngress,
  backends: Backends,
  verifier: IdTokenVerifier | undefined,
): { subscriber: PushSubscriptionBroker; verifier: IdTokenVerifier } | undefined {
  if (ingress.mode !== 'push') return undefined;
  return {
    subscriber: new PushSubscriptionBroker(backends.broker),
    verifier:
      verifier ??
      new GoogleIdTokenVerifier({
        audience: ingress.audience,
        serviceAccountEmail: ingress.serviceAccountEmail,
      }),
  };
}

function logStarted<C extends WorkerServiceConfig, H extends AnyStepHandler>(
  logger: Logger,
  started: {
    prepared: PreparedWorker<C, H>;
    worker: WorkerMicroservice;
    health: HealthServer;
    backends: Backends;
    ingress: WorkerIngress;
  },
): void {
  const { prepared, worker, health, backends, ingress } = started;
  const { stepType } = prepared.runtime.handler.descriptor;
  const effective = worker.app
    .get(StepHarnessRegistry, { strict: false })
    .harnessFor(stepType)?.policy;
  logEvent(logger, 'info', 'service_started', {
    port: health.port,
    backend: backends.describe(),
    stepType,
    ingress: [ingress.mode === 'push' ? 'pubsub-push' : 'pubsub-pull'],
    ...(ingress.mode === 'push'
      ? {
          push: {
            path: PUBSUB_PUSH_PATH,
            audience: ingress.audience,
            serviceAccount: ingress.serviceAccountEmail,
          },
        }
      : {}),
    // The effective step policy (step type defaults, TDA_STEP_* env, service overrides).
    ...(effective === undefined
      ? {}
      : {
          stepPolicy: {
            timeoutMs: effective.timeoutMs,
            leaseMs: effective.leaseMs,
            heartbeatMs: effective.heartbeatMs,
            maxAttempts: effective.maxAttempts,
            retryTries: effective.handlerMaxTries,
            retryBaseDelayMs: effective.handlerRetryBaseDelayMs,
            retryMaxDelayMs: effective.handlerRetryMaxDelayMs,
          },
        }),
    ...prepared.runtime.startedFields,
  });
}
