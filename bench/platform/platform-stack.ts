import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryArtifactStore } from '@tda/artifacts';
import type { EmulatorEndpoints } from '@tda/emulators';
import { createLogger, type Logger } from '@tda/observability';
import { startLocalStack, type LocalStack } from '@tda/service-local-stack';
import { noopCatalogue } from './noop-flows';
import { HandlerClock, noopWorker } from './noop-step';
import { CallLog, RecordingBroker, RecordingRunStore } from './recording-adapters';
import { RunDriver } from './run-driver';

/** The local stack with the no-op flows and worker, and what the bench reads back. */
export interface PlatformStack {
  stack: LocalStack;
  /** The bench's client, in its own thread (POST /runs, told when runs end). */
  driver: RunDriver;
  log: CallLog;
  handlers: HandlerClock;
  /** TDA_PUBSUB_PREFIX of the stack's topics. */
  prefix: string;
  close(): Promise<void>;
}

/** Log lines are built as in production (pino JSON, info) and dropped: no disk in the figures. */
function droppedLogger(service: string): Logger {
  return createLogger({ service, level: 'info', destination: { write: () => undefined } });
}

/**
 * `npm start`'s composition (orchestrator and workers in one process, each built from its own
 * config) with the no-op catalogue and worker, every store and bus call recorded. The
 * reconciler and the schedule tick are off (timers, not per-step work); the running limits are
 * lifted so that the bench sets the concurrency itself.
 */
export async function startPlatformStack(options: {
  backend: 'memory' | 'emulators';
  emulators?: EmulatorEndpoints;
  /** Artifacts in process memory instead of files: TDA's own cost without the disk's. */
  artifactsInMemory?: boolean;
}): Promise<PlatformStack> {
  const log = new CallLog();
  const handlers = new HandlerClock();
  const dataDir = mkdtempSync(join(tmpdir(), 'tda-bench-platform-'));
  const prefix = `bench-${Date.now().toString(36)}`;
  const inMemoryArtifacts = new InMemoryArtifactStore();
  const stack = await startLocalStack({
    env: {
      TDA_BACKEND: options.backend,
      PORT: '0',
      TDA_DATA_DIR: dataDir,
      TDA_PUBSUB_PREFIX: prefix,
      TDA_RECONCILE_INTERVAL_MS: '0',
      TDA_SCHEDULE_TICK_MS: '0',
      TDA_MAX_RUNNING_RUNS: '10000',
      TDA_MAX_RUNNING_RUNS_PER_OWNER: '10000',
      TDA_MAX_ACTIVE_RUNS_PER_OWNER: '10000',
      TDA_LOG_LEVEL: 'info',
    },
    loggerFor: droppedLogger,
    ...(options.emulators === undefined ? {} : { emulators: options.emulators }),
    hooks: {
      catalogue: noopCatalogue(),
      workers: [noopWorker(handlers)],
      store: (store, service) => new RecordingRunStore(store, service, log),
      broker: (broker, service) => new RecordingBroker(broker, service, log),
      ...(options.artifactsInMemory === true ? { artifacts: () => inMemoryArtifacts } : {}),
    },
  });
  const driver = new RunDriver({ baseUrl: stack.url, token: stack.token }, log);
  return {
    stack,
    driver,
    log,
    handlers,
    prefix,
    close: async () => {
      await stack.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
