import { backendEnv, createBackends, type BackendConfig, type Backends } from '@tda/backends';
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
  startHealthServer,
  type HealthServer,
  type HttpRoute,
  type IdTokenVerifier,
} from '@tda/service-runtime';
import { z } from 'zod';
import type { StepHarnessPolicy } from './harness-policy';
import { PUBSUB_PUSH_PATH, pubSubPushRoute } from './pubsub-push.route';
import { PushSubscriptionBroker } from './pubsub-push.subscriber';
import { StepHarnessRegistry } from './step-harness.registry';
import type { StepHandler } from './step-handler';
import { createStepWorker } from './step-worker.factory';
import { workerIngress, workerIngressEnv } from './worker-ingress';
import type { WorkerMicroservice } from './worker-microservice.factory';
import { workerStepPolicy, workerStepPolicyEnv } from './worker-step-policy';

/**
 * Env fields every worker service reads: the shared backend env, its port and log level, the
 * optional TDA_STEP_* step policy overrides (workerStepPolicyEnv) and the ingress
 * (workerIngressEnv: TDA_INGRESS pull | push, TDA_PUSH_AUDIENCE, TDA_PUSH_SERVICE_ACCOUNT). A
 * worker's config.ts spreads these into its own single zod schema (with refineGoogleBackend and
 * refineWorkerIngress).
 */
export const workerServiceEnv = {
  ...backendEnv,
  ...workerStepPolicyEnv,
  ...workerIngressEnv,
  /** /healthz, /metrics and the HTTP ingress routes (Cloud Run needs a listening port anyway). */
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  TDA_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
} as const;

/** The worker env alone (tests, tools); a service extends workerServiceEnv in its own schema. */
export const workerServiceConfigSchema = z.object(workerServiceEnv);

/** What bootstrapWorkerService reads of a worker's config: BackendConfig, PORT, TDA_LOG_LEVEL, TDA_STEP_*, TDA_INGRESS, TDA_PUSH_*. */
export type WorkerServiceConfig = z.infer<typeof workerServiceConfigSchema>;

/** What a worker's `bootstrap...()` takes: the env to validate and, in tests, a logger. */
export interface WorkerBootOptions {
  /** Environment to validate; default the process environment (read by @tda/config only). */
  env?: EnvSource;
  logger?: Logger;
}

export interface StepWorkerSettings {
  prefix: string;
  policy: Pick<StepHarnessPolicy, 'artifactBucket' | 'artifactPrefix' | 'topicPrefix'>;
}

/**
 * The createStepWorker options a backend config decides: the Pub/Sub prefix and the artifact
 * names. Spread into createStepWorker({...}) by launchers that compose workers themselves.
 */
export function stepWorkerSettings(
  config: Pick<
    BackendConfig,
    'TDA_ARTIFACTS_BUCKET' | 'TDA_ARTIFACTS_PREFIX' | 'TDA_PUBSUB_PREFIX'
  >,
): StepWorkerSettings {
  return {
    prefix: config.TDA_PUBSUB_PREFIX,
    policy: {
      artifactBucket: config.TDA_ARTIFACTS_BUCKET,
      artifactPrefix: config.TDA_ARTIFACTS_PREFIX,
      topicPrefix: config.TDA_PUBSUB_PREFIX,
    },
  };
}

export interface BootstrapWorkerServiceOptions<
  C extends WorkerServiceConfig,
  H extends StepHandler = StepHandler,
> {
  /** Service name: logger serviceContext, metrics label, log messages. */
  service: string;
  /** Already validated (the service's loadConfig): a ConfigError belongs to the caller. */
  config: C;
  /** Default: a Cloud Logging JSON logger at TDA_LOG_LEVEL. */
  logger?: Logger | undefined;
  /** Runs before any backend is opened, so a handler that cannot be built fails the boot cheaply. */
  createHandler: (config: C) => H | Promise<H>;
  /** Service-specific fields of the service_started line (no secrets). */
  startedFields?: (config: C, handler: H) => Record<string, unknown>;
  /**
   * Harness policy over the one the config decides (the step type's policy, then the TDA_STEP_*
   * env), e.g. the LLM worker's own step timeout. The combination is validated at boot.
   */
  policy?: Partial<StepHarnessPolicy>;
  maxInFlight?: number;
  drainTimeoutMs?: number;
  /** How the adapters are built; default @tda/backends createBackends (tests count closes). */
  createBackends?: (config: C) => Promise<Backends>;
  /**
   * TDA_INGRESS=push: how POST /pubsub/push authenticates. Default a GoogleIdTokenVerifier for
   * TDA_PUSH_AUDIENCE / TDA_PUSH_SERVICE_ACCOUNT on Google's keys; tests pass one on local keys.
   */
  pushVerifier?: IdTokenVerifier;
}

export interface WorkerServiceHandle<
  C extends WorkerServiceConfig = WorkerServiceConfig,
  H extends StepHandler = StepHandler,
> {
  config: C;
  logger: Logger;
  handler: H;
  metrics: TdaMetrics;
  backends: Backends;
  worker: WorkerMicroservice;
  health: HealthServer;
  /**
   * Drains the transport and aborts what still runs, closes the adapters, then the health port.
   * Every step is attempted; the first failure is rethrown. Calling it again returns the same
   * promise.
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

/**
 * The standalone boot of a worker service (its main.ts): logger → handler → metrics → backends
 * for TDA_BACKEND → a single-handler worker consuming its step-ready subscription (TDA_INGRESS:
 * a streaming pull, or deliveries on POST /pubsub/push) → /healthz, /metrics and the ingress
 * routes on PORT → `service_started` (port, backend description, ingress, startedFields).
 * Anything that fails after the backends were opened closes what was already started (worker,
 * backends) before the error is rethrown, so a failed boot leaves no client or port behind.
 */
export async function bootstrapWorkerService<
  C extends WorkerServiceConfig,
  H extends StepHandler = StepHandler,
>(options: BootstrapWorkerServiceOptions<C, H>): Promise<WorkerServiceHandle<C, H>> {
  const { service, config } = options;
  const logger =
    options.logger ??
    createLogger({
      service,
      level: config.TDA_LOG_LEVEL,
      projectId: config.GOOGLE_CLOUD_PROJECT,
    });
  const handler = await options.createHandler(config);
  // Before any backend is opened: a policy that cannot work is a cheap ConfigError.
  const stepPolicy = workerStepPolicy(service, config, handler.stepType, options.policy);
  const ingress = workerIngress(service, config);
  const metrics = createMetrics({ service });
  const backends = await (options.createBackends ?? createBackends)(config);
  // What to undo, newest first, if a later boot step fails.
  const undo: (() => Promise<void>)[] = [() => backends.close()];
  let worker: WorkerMicroservice;
  let health: HealthServer;
  let effectivePolicy: StepHarnessPolicy;
  try {
    const settings = stepWorkerSettings(config);
    // Push: the transport subscribes to an in-process source fed by POST /pubsub/push, so no
    // streaming pull is opened (a Cloud Run Service has no CPU between requests).
    const push =
      ingress.mode === 'push'
        ? {
            subscriber: new PushSubscriptionBroker(backends.broker),
            verifier:
              options.pushVerifier ??
              new GoogleIdTokenVerifier({
                audience: ingress.audience,
                serviceAccountEmail: ingress.serviceAccountEmail,
              }),
          }
        : undefined;
    worker = await createStepWorker({
      handler,
      store: backends.store,
      broker: backends.broker,
      ...(push === undefined ? {} : { subscriber: push.subscriber }),
      artifacts: backends.artifacts,
      logger,
      metrics,
      prefix: settings.prefix,
      policy: { ...settings.policy, ...stepPolicy },
      ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
      ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
    });
    const { app } = worker;
    undo.unshift(() => app.close());
    await app.listen();
    const harness = app.get(StepHarnessRegistry, { strict: false }).harnessFor(handler.stepType);
    // createWorkerMicroservice already refused a handler set without this step type.
    if (harness === undefined) throw new Error(`no harness for ${handler.stepType}`);
    effectivePolicy = harness.policy;
    const routes: HttpRoute[] = [];
    if (push !== undefined) {
      routes.push(
        pubSubPushRoute({
          ...push,
          subscription: stepReadySubscription(handler.stepType, settings.prefix),
          logger,
        }),
      );
    }
    health = await startHealthServer({ port: config.PORT, metrics, routes });
  } catch (error) {
    await closeAll(undo).catch((cleanupError: unknown) => {
      logger.warn({ error: describeError(cleanupError) }, 'cleanup after a failed boot failed');
    });
    throw error;
  }
  logEvent(logger, 'info', 'service_started', {
    port: health.port,
    backend: backends.describe(),
    stepType: handler.stepType,
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
    stepPolicy: {
      timeoutMs: effectivePolicy.timeoutMs,
      leaseMs: effectivePolicy.leaseMs,
      heartbeatMs: effectivePolicy.heartbeatMs,
      maxAttempts: effectivePolicy.maxAttempts,
      retryTries: effectivePolicy.handlerMaxTries,
      retryBaseDelayMs: effectivePolicy.handlerRetryBaseDelayMs,
      retryMaxDelayMs: effectivePolicy.handlerRetryMaxDelayMs,
    },
    ...options.startedFields?.(config, handler),
  });
  let closing: Promise<void> | undefined;
  return {
    config,
    logger,
    handler,
    metrics,
    backends,
    worker,
    health,
    close: () => {
      closing ??= closeAll([
        () => worker.app.close(),
        () => backends.close(),
        () => health.close(),
      ]);
      return closing;
    },
  };
}
