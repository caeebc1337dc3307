import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { backendConfigSchema, createBackends, type Backends } from '@tda/backends';
import { loadConfig, type EnvSource } from '@tda/config';
import type { StepType } from '@tda/contracts';
import { hasGcloud, startEmulators, type RunningEmulators } from '@tda/emulators';
import type { FlowRunStore } from '@tda/flow-store';
import type { MessageBroker } from '@tda/messaging';
import { createMetrics, type Logger } from '@tda/observability';
import { createOrchestratorApp, loadOrchestratorConfig } from '@tda/service-orchestrator';
import { LOCAL_API_FILE } from '@tda/service-cli';
import { createChartExportHandler, loadChartExportConfig } from '@tda/service-worker-chart-export';
import { createOhlcvExportHandler, loadOhlcvExportConfig } from '@tda/service-worker-ohlcv-export';
import {
  createLlmReportHandler,
  createLlmReportRuntime,
  loadLlmReportConfig,
  llmReportHarnessPolicy,
} from '@tda/service-worker-llm-report';
import {
  createStepWorker,
  stepWorkerSettings,
  workerStepPolicy,
  type StepHandler,
  type StepHarnessPolicy,
  type WorkerServiceConfig,
  type WorkerMicroservice,
} from '@tda/worker-kit';
import { loadLocalStackConfig, type LocalStackConfig } from './local-stack.config';

export interface LocalStack {
  url: string;
  token: string;
  backend: 'memory' | 'emulators' | 'gcp';
  /** How the backend was chosen and where things live, for the banner. */
  description: string[];
  dataDir: string;
  backends: Backends;
  config: LocalStackConfig;
  close(): Promise<void>;
}

export interface StartLocalStackOptions {
  env: EnvSource;
  /** One logger for every service (each line says which service via serviceContext). */
  loggerFor: (service: string) => Logger;
  /** Use these emulators instead of starting new ones (tests). */
  emulators?: { firestoreHost: string; pubsubHost: string; projectId: string };
  /** Test hooks (the chaos suite); `npm start` passes none. */
  hooks?: LocalStackHooks;
}

/** The services the local stack composes (also the name each hook is called with). */
export type LocalService =
  'orchestrator' | 'worker-ohlcv-export' | 'worker-chart-export' | 'worker-llm-report';

/**
 * Fault injection and tuning for tests: decorate the store, broker and handler each service
 * gets (wrappers around the real adapters, so the services themselves stay unchanged), override
 * the workers' harness policy (short leases), or leave workers out to run them as separate
 * processes.
 */
export interface LocalStackHooks {
  store?(store: FlowRunStore, service: LocalService): FlowRunStore;
  broker?(broker: MessageBroker, service: LocalService): MessageBroker;
  handler?(handler: StepHandler, service: LocalService): StepHandler;
  workerPolicy?: Partial<StepHarnessPolicy>;
  omitWorkers?: readonly StepType[];
}

/**
 * The orchestrator and every worker in one process over one set of adapters (DESIGN.md §1: a
 * local launcher may compose the services). Each service is built exactly as its own main.ts
 * builds it, from its own config schema, so the composition adds no behaviour of its own.
 */
export async function startLocalStack(options: StartLocalStackOptions): Promise<LocalStack> {
  const config = loadLocalStackConfig(options.env);
  const cleanups: (() => Promise<void>)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch(() => undefined);
    }
  };
  try {
    const description: string[] = [];
    let backend: LocalStack['backend'];
    if (config.TDA_BACKEND === 'auto') {
      backend = options.emulators !== undefined || hasGcloud() ? 'emulators' : 'memory';
      description.push(
        backend === 'emulators'
          ? 'TDA_BACKEND=auto: gcloud found, using the Firestore and Pub/Sub emulators'
          : 'TDA_BACKEND=auto: gcloud not found, using the in-memory backend (install google-cloud-cli with its emulators to run on them)',
      );
    } else backend = config.TDA_BACKEND;

    const overlay: Record<string, string> = { TDA_BACKEND: backend };
    if (
      backend === 'emulators' &&
      (config.FIRESTORE_EMULATOR_HOST === undefined || config.PUBSUB_EMULATOR_HOST === undefined)
    ) {
      let endpoints = options.emulators;
      if (endpoints === undefined) {
        const running: RunningEmulators = await startEmulators(config.GOOGLE_CLOUD_PROJECT);
        cleanups.push(() => running.stop());
        endpoints = running;
        description.push('started the Firestore and Pub/Sub emulators (stopped on exit)');
      }
      overlay['FIRESTORE_EMULATOR_HOST'] = endpoints.firestoreHost;
      overlay['PUBSUB_EMULATOR_HOST'] = endpoints.pubsubHost;
      overlay['GOOGLE_CLOUD_PROJECT'] = endpoints.projectId;
    }
    const token = config.TDA_API_TOKEN ?? randomBytes(24).toString('base64url');
    overlay['TDA_API_TOKEN'] = token;
    overlay['PORT'] = String(config.PORT);
    const serviceEnv: EnvSource = { ...options.env, ...overlay };

    const backends = await createBackends(
      loadConfig('local-stack', backendConfigSchema, serviceEnv),
    );
    cleanups.push(() => backends.close());
    description.push(...backends.describe());

    // One registry for all services: /metrics of the API shows every series, labelled by service.
    const metrics = createMetrics({ service: 'local-stack' });
    const hooks = options.hooks ?? {};
    const adapters = (service: LocalService) => ({
      store: hooks.store?.(backends.store, service) ?? backends.store,
      broker: hooks.broker?.(backends.broker, service) ?? backends.broker,
      artifacts: backends.artifacts,
      metrics,
    });
    const orchestratorConfig = loadOrchestratorConfig(serviceEnv);
    const orchestrator: INestApplication = await createOrchestratorApp({
      ...adapters('orchestrator'),
      logger: options.loggerFor('orchestrator'),
      config: orchestratorConfig,
    });
    cleanups.push(() => orchestrator.close());

    // Each worker is built from its own config schema, exactly as its main.ts would.
    const omitted = new Set<StepType>(hooks.omitWorkers ?? []);
    const workers: WorkerMicroservice[] = [];
    const startWorker = async (
      service: LocalService,
      handler: StepHandler,
      config: WorkerServiceConfig,
      policy: Partial<StepHarnessPolicy> = {},
    ): Promise<void> => {
      const settings = stepWorkerSettings(config);
      // The TDA_STEP_* overrides apply here as in the worker's own bootstrap, and a test's
      // policy on top of them is checked the same way.
      const stepPolicy = workerStepPolicy(service, config, handler.stepType, {
        ...policy,
        ...hooks.workerPolicy,
      });
      workers.push(
        await createStepWorker({
          ...adapters(service),
          handler: hooks.handler?.(handler, service) ?? handler,
          logger: options.loggerFor(service),
          ...settings,
          policy: { ...settings.policy, ...stepPolicy },
        }),
      );
    };
    if (!omitted.has('OHLCV_EXPORT')) {
      const ohlcvConfig = loadOhlcvExportConfig(serviceEnv);
      await startWorker(
        'worker-ohlcv-export',
        await createOhlcvExportHandler(ohlcvConfig),
        ohlcvConfig,
      );
    }
    if (!omitted.has('CHART_EXPORT')) {
      const chartConfig = loadChartExportConfig(serviceEnv);
      await startWorker(
        'worker-chart-export',
        createChartExportHandler({ maxChartImageBytes: chartConfig.TDA_MAX_CHART_IMAGE_BYTES }),
        chartConfig,
      );
    }
    if (!omitted.has('LLM_REPORT')) {
      const llmConfig = loadLlmReportConfig(serviceEnv);
      // Same client + registry wiring as the worker's own bootstrap.
      const llm = await createLlmReportRuntime(llmConfig);
      cleanups.push(() => llm.close());
      const { registry, client: llmClient } = llm;
      description.push(
        llmClient.provider === 'offline'
          ? 'LLM: offline analyst (deterministic, no model; set GEMINI_API_KEY to use Gemini)'
          : `LLM: ${llmClient.provider}`,
      );
      await startWorker(
        'worker-llm-report',
        createLlmReportHandler(llmConfig, {
          registry,
          client: llmClient,
          logger: options.loggerFor('worker-llm-report'),
        }),
        llmConfig,
        llmReportHarnessPolicy(llmConfig),
      );
    }
    for (const worker of workers) {
      cleanups.push(() => worker.app.close());
      await worker.app.listen();
    }
    await orchestrator.startAllMicroservices();
    await orchestrator.listen(config.PORT, '127.0.0.1');
    const address = orchestrator.getHttpServer().address() as { port: number };
    const url = `http://127.0.0.1:${address.port}`;

    const dataDir = resolve(config.TDA_DATA_DIR);
    mkdirSync(dataDir, { recursive: true });
    const apiFile = join(dataDir, LOCAL_API_FILE);
    // The CLI finds the local API here; the token is local and regenerated on every start.
    writeFileSync(apiFile, `${JSON.stringify({ url, token }, null, 2)}\n`, { mode: 0o600 });

    return {
      url,
      token,
      backend,
      description,
      dataDir,
      backends,
      config,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
