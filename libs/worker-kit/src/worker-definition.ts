import { loadConfig, type EnvSource } from '@tda/config';
import { ServiceDisabledError } from '@tda/service-runtime';
import type { Logger } from '@tda/observability';
import type { z } from 'zod';
import type { StepHarnessPolicy } from './harness-policy';
import type { AnyStepHandler } from './step-handler';
import type { WorkerServiceConfig } from './worker-env';
import { workerStepPolicy } from './worker-step-policy';

/** What a worker builds from its config before any backend opens. */
export interface WorkerRuntime<H extends AnyStepHandler = AnyStepHandler> {
  handler: H;
  /** Service-specific fields of the service_started line (never secrets). */
  startedFields?: Record<string, unknown>;
  /** Closes what the runtime opened itself (e.g. the LLM worker's registry client). */
  close?(): Promise<void>;
  /** Deliveries handled at once (default the transport's 10): 1 for CPU-bound steps. */
  maxInFlight?: number;
  /**
   * 'on-demand': step-ready messages are pulled only when a slot is free, so none waits inside
   * a busy instance while another replica is idle (long steps). Default: a streaming pull.
   */
  delivery?: 'streaming' | 'on-demand';
}

export interface WorkerCreateContext<O> {
  logger: Logger;
  /** Test hooks of this worker (a recorded exchange, a clock, ...); undefined in production. */
  overrides: O | undefined;
}

/**
 * A worker service in one value: its step type descriptor, its single config schema (the shared
 * worker env spread in), how its handler is built and, when the service decides part of the
 * harness policy itself, that part. The worker's own main (bootstrapWorker) and the local
 * launcher (composeWorker) both build the worker from it, the same way.
 */
export interface WorkerDefinition<
  C extends WorkerServiceConfig = WorkerServiceConfig,
  H extends AnyStepHandler = AnyStepHandler,
  O = never,
> {
  readonly descriptor: H['descriptor'];
  readonly configSchema: z.ZodType<C, unknown>;
  create(config: C, context: WorkerCreateContext<O>): WorkerRuntime<H> | Promise<WorkerRuntime<H>>;
  /** Harness policy the service decides over its step type's and the TDA_STEP_* env's. */
  policy?(config: C): Partial<StepHarnessPolicy>;
  /**
   * Why the service is switched off by its config (seed 003 enable toggle), or undefined: a
   * disabled worker builds nothing; its main logs service_disabled and exits 0.
   */
  disabled?(config: C): string | undefined;
  /**
   * True in one of the worker's own threads (a bundle re-entered as a worker_thread, e.g. the
   * backtest's stage B): runWorker then starts nothing, the thread serves itself.
   */
  isThread?(): boolean;
}

/** A worker switched off by its config: not a failure (runServiceMain exits 0). */
export class WorkerDisabledError extends ServiceDisabledError {}

/** Any worker definition (the local launcher's list). */
export type AnyWorkerDefinition = WorkerDefinition<WorkerServiceConfig, AnyStepHandler, unknown>;

export function defineWorker<C extends WorkerServiceConfig, H extends AnyStepHandler, O = never>(
  definition: WorkerDefinition<C, H, O>,
): WorkerDefinition<C, H, O> {
  return Object.freeze(definition);
}

export interface PreparedWorker<C extends WorkerServiceConfig, H extends AnyStepHandler> {
  config: C;
  runtime: WorkerRuntime<H>;
  /** The harness policy overrides: TDA_STEP_* env and the service's own, checked at boot. */
  stepPolicy: Partial<StepHarnessPolicy>;
}

/**
 * The steps every way of running a worker shares: validate the env against the worker's schema
 * (ConfigError naming the variables), check the step policy it asks for, build the handler.
 * Nothing is opened that the caller would have to close, except what `runtime.close` closes.
 */
export async function prepareWorker<C extends WorkerServiceConfig, H extends AnyStepHandler, O>(
  definition: WorkerDefinition<C, H, O>,
  options: {
    env?: EnvSource | undefined;
    /** The worker's logger, once its config (TDA_LOG_LEVEL) is known. */
    logger: (config: C) => Logger;
    overrides?: O | undefined;
    /** A test's policy on top of the service's (short leases); checked the same way. */
    policy?: Partial<StepHarnessPolicy> | undefined;
  },
): Promise<PreparedWorker<C, H>> {
  const { descriptor } = definition;
  const config = loadConfig(descriptor.service, definition.configSchema, options.env);
  // Before the handler is built: a policy that cannot work is a cheap ConfigError.
  const off = definition.disabled?.(config);
  if (off !== undefined) throw new WorkerDisabledError(descriptor.service, off);
  const stepPolicy = workerStepPolicy(config, descriptor, {
    ...definition.policy?.(config),
    ...options.policy,
  });
  const runtime = await definition.create(config, {
    logger: options.logger(config),
    overrides: options.overrides,
  });
  if (runtime.handler.descriptor !== descriptor) {
    await runtime.close?.();
    throw new Error(
      `${descriptor.service} built a handler for ${runtime.handler.descriptor.stepType}, not ${descriptor.stepType}`,
    );
  }
  return { config, runtime, stepPolicy };
}

/** The transport's concurrency when the test or the worker's runtime sets one. */
export function maxInFlightOf(maxInFlight: number | undefined): { maxInFlight?: number } {
  return maxInFlight === undefined ? {} : { maxInFlight };
}

/** How the worker's runtime wants its subscription read, when it says. */
export function deliveryOf(runtime: Pick<WorkerRuntime, 'delivery'>): {
  delivery?: 'streaming' | 'on-demand';
} {
  return runtime.delivery === undefined ? {} : { delivery: runtime.delivery };
}
