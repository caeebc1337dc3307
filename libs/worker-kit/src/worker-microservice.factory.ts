import type { INestMicroservice, LoggerService, LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory, type IEntryNestModule } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import type { StepType } from '@tda/contracts';
import {
  PubSubServer,
  RethrowRpcExceptionFilter,
  stepReadySubscription,
  type MessageBroker,
} from '@tda/messaging';
import type { Logger } from '@tda/observability';
import { StepHarnessRegistry, WorkerConfigError } from './step-harness.registry';

export interface WorkerMicroserviceOptions {
  broker: MessageBroker;
  /** One step-ready subscription is consumed per step type; each needs a handler. */
  stepTypes: readonly StepType[];
  logger: Logger;
  /** Concurrent deliveries across all subscriptions (PubSubServer). Default 10. */
  maxInFlight?: number;
  /** close(): how long running handlers get before they are aborted. Default 8 s. */
  drainTimeoutMs?: number;
  /** Topology prefix (default 'tda'). */
  prefix?: string;
  ackDeadlineSeconds?: number;
  maxLeaseExtensionSeconds?: number;
  /** How the subscriptions are read (MessageBroker.subscribe); default streaming. */
  delivery?: 'streaming' | 'on-demand';
  /** Nest's own console logger; off by default (our logs are pino JSON). */
  nestLogger?: LoggerService | NestLogLevel[] | false;
}

export interface WorkerMicroservice {
  app: INestMicroservice;
  server: PubSubServer;
}

/**
 * A Nest microservice consuming `stepReadySubscription(stepType)` for each step type through
 * PubSubServer, with the error-preserving exception filter. `module` is typically an app module
 * importing WorkerModule.forRoot(...). Refuses (closes the app and throws WorkerConfigError) when
 * a consumed step type has no handler. Call `app.listen()` to start consuming; `app.close()`
 * drains the transport, then aborts what is still running.
 */
export async function createWorkerMicroservice(
  module: IEntryNestModule,
  options: WorkerMicroserviceOptions,
): Promise<WorkerMicroservice> {
  if (options.stepTypes.length === 0) {
    throw new WorkerConfigError('createWorkerMicroservice needs at least one step type');
  }
  const server = new PubSubServer({
    broker: options.broker,
    subscriptions: [...new Set(options.stepTypes)].map((t) =>
      stepReadySubscription(t, options.prefix),
    ),
    logger: options.logger,
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
    ...(options.ackDeadlineSeconds === undefined
      ? {}
      : { ackDeadlineSeconds: options.ackDeadlineSeconds }),
    ...(options.maxLeaseExtensionSeconds === undefined
      ? {}
      : { maxLeaseExtensionSeconds: options.maxLeaseExtensionSeconds }),
    ...(options.delivery === undefined ? {} : { delivery: options.delivery }),
  });
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(module, {
    strategy: server,
    logger: options.nestLogger ?? false,
    // Our own bootstrap decides how to report a failed boot; Nest must not exit the process.
    abortOnError: false,
  });
  app.useGlobalFilters(new RethrowRpcExceptionFilter());
  let registry: StepHarnessRegistry;
  try {
    registry = app.get(StepHarnessRegistry, { strict: false });
  } catch {
    await app.close();
    throw new WorkerConfigError('the module does not import WorkerModule.forRoot(...)');
  }
  const missing = options.stepTypes.filter((stepType) => !registry.has(stepType));
  if (missing.length > 0) {
    await app.close();
    throw new WorkerConfigError(
      `configured to consume step type ${missing.join(', ')} but no handler serves it (handlers: ${registry.stepTypes().join(', ')})`,
    );
  }
  return { app, server };
}
