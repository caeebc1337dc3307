import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { ensureDemoAccount } from '@tda/accounts';
import type { ArtifactStore } from '@tda/artifacts';
import { backendConfigSchema, createBackends, type Backends } from '@tda/backends';
import { loadConfig, type EnvSource } from '@tda/config';
import { hasGcloud, startEmulators, type RunningEmulators } from '@tda/emulators';
import type { FlowCatalogue } from '@tda/flow-engine';
import type { FlowRunStore } from '@tda/flow-store';
import { createConfiguredCandleSource } from '@tda/market-data';
import type { MessageBroker } from '@tda/messaging';
import { createMetrics, logEvent, type Logger } from '@tda/observability';
import { createOrchestratorApp, loadOrchestratorConfig } from '@tda/service-orchestrator';
import { LOCAL_API_FILE } from '@tda/service-cli';
import { issueApiToken, type IdentityStore } from '@tda/identity';
import type { WorkerStepType } from '@tda/step-types';
import {
  composeWorker,
  type AnyStepHandler,
  type AnyWorkerDefinition,
  type ComposedWorker,
  type StepHarnessPolicy,
  type WorkerRuntime,
  WorkerDisabledError,
} from '@tda/worker-kit';
import { loadLocalStackConfig, type LocalStackConfig } from './local-stack.config';
import { LOCAL_WORKERS } from './local-workers';

export interface LocalStack {
  url: string;
  /** The operator token (the CLI reads it from local-api.json). */
  token: string;
  /** A stored admin API token of `adminOwner` for the console; revoked on close. */
  adminToken: string;
  /** TDA_DEFAULT_OWNER: the owner of the operator, the local admin and the demo run. */
  adminOwner: string;
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
export type LocalService = 'orchestrator' | `worker-${string}`;

/**
 * Fault injection and tuning for tests and the bench: decorate the store, broker and handler
 * each service gets (wrappers around the real adapters, so the services themselves stay
 * unchanged), override the workers' harness policy (short leases), leave workers out to run them
 * as separate processes, or compose other flows and workers (the bench's no-op step type).
 */
export interface LocalStackHooks {
  store?(store: FlowRunStore, service: LocalService): FlowRunStore;
  broker?(broker: MessageBroker, service: LocalService): MessageBroker;
  artifacts?(artifacts: ArtifactStore, service: LocalService): ArtifactStore;
  handler?(handler: AnyStepHandler, service: LocalService): AnyStepHandler;
  workerPolicy?: Partial<StepHarnessPolicy>;
  omitWorkers?: readonly WorkerStepType[];
  /** The orchestrator's clock (the schedules e2e drives slots with it); workers keep real time. */
  clock?: () => Date;
  /** The orchestrator's flows instead of the deployment's catalogue. */
  catalogue?: FlowCatalogue;
  /** The workers to compose instead of LOCAL_WORKERS. */
  workers?: readonly AnyWorkerDefinition[];
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
    const backend = chooseBackend(config, options, description);
    const { serviceEnv, token } = await serviceEnvironment(config, options, backend, {
      cleanups,
      description,
    });
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
      artifacts: hooks.artifacts?.(backends.artifacts, service) ?? backends.artifacts,
      metrics,
    });
    const orchestratorConfig = loadOrchestratorConfig(serviceEnv);
    const orchestrator: INestApplication = await createOrchestratorApp({
      ...adapters('orchestrator'),
      reportIndex: backends.reportIndex,
      accounts: backends.accounts,
      identities: backends.identities,
      schedules: backends.schedules,
      signals: backends.signals,
      evaluations: backends.evaluations,
      ...(hooks.clock === undefined ? {} : { clock: hooks.clock }),
      ...(hooks.catalogue === undefined ? {} : { catalogue: hooks.catalogue }),
      marketData: await createConfiguredCandleSource(orchestratorConfig),
      logger: options.loggerFor('orchestrator'),
      config: orchestratorConfig,
    });
    cleanups.push(() => orchestrator.close());
    description.push(...(await demoAccountLine(backends, orchestratorConfig.TDA_DEFAULT_OWNER)));
    const admin = await createLocalAdmin(backends.identities, orchestratorConfig.TDA_DEFAULT_OWNER);
    cleanups.push(admin.revoke);

    // Each worker is built from its own definition, exactly as its main.ts builds it.
    const workers = await startWorkers({
      env: serviceEnv,
      adapters,
      backends,
      loggerFor: options.loggerFor,
      hooks,
    });
    cleanups.push(...workers.map((w) => () => w.close()));
    for (const worker of workers) await worker.worker.app.listen();
    description.push(...llmLine(workers));
    await orchestrator.startAllMicroservices();
    const { url, dataDir } = await serveApi(orchestrator, config, token);
    return {
      url,
      token,
      adminToken: admin.token,
      adminOwner: orchestratorConfig.TDA_DEFAULT_OWNER,
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

/** TDA_BACKEND, with `auto` decided: the emulators when gcloud (or given endpoints) is there. */
function chooseBackend(
  config: LocalStackConfig,
  options: StartLocalStackOptions,
  description: string[],
): LocalStack['backend'] {
  if (config.TDA_BACKEND !== 'auto') return config.TDA_BACKEND;
  const backend = options.emulators !== undefined || hasGcloud() ? 'emulators' : 'memory';
  description.push(
    backend === 'emulators'
      ? 'TDA_BACKEND=auto: gcloud found, using the Firestore and Pub/Sub emulators'
      : 'TDA_BACKEND=auto: gcloud not found, using the in-memory backend (install google-cloud-cli with its emulators to run on them)',
  );
  return backend;
}

/**
 * The env every service validates with its own schema: the process env plus the backend, the
 * emulator hosts (started here when none are set), the API token and the port.
 */
async function serviceEnvironment(
  config: LocalStackConfig,
  options: StartLocalStackOptions,
  backend: LocalStack['backend'],
  out: { cleanups: (() => Promise<void>)[]; description: string[] },
): Promise<{ serviceEnv: EnvSource; token: string }> {
  const overlay: Record<string, string> = { TDA_BACKEND: backend };
  const hostsSet =
    config.FIRESTORE_EMULATOR_HOST !== undefined && config.PUBSUB_EMULATOR_HOST !== undefined;
  if (backend === 'emulators' && !hostsSet) {
    let endpoints = options.emulators;
    if (endpoints === undefined) {
      const running: RunningEmulators = await startEmulators(config.GOOGLE_CLOUD_PROJECT);
      out.cleanups.push(() => running.stop());
      endpoints = running;
      out.description.push('started the Firestore and Pub/Sub emulators (stopped on exit)');
    }
    overlay['FIRESTORE_EMULATOR_HOST'] = endpoints.firestoreHost;
    overlay['PUBSUB_EMULATOR_HOST'] = endpoints.pubsubHost;
    overlay['GOOGLE_CLOUD_PROJECT'] = endpoints.projectId;
  }
  const token = config.TDA_API_TOKEN ?? randomBytes(24).toString('base64url');
  overlay['TDA_API_TOKEN'] = token;
  overlay['PORT'] = String(config.PORT);
  return { serviceEnv: { ...options.env, ...overlay }, token };
}

/** The banner line naming the LLM provider, from the worker that reports one. */
function llmLine(workers: readonly { runtime: WorkerRuntime }[]): string[] {
  const provider = workers.find((w) => w.runtime.startedFields?.['llmProvider'] !== undefined)
    ?.runtime.startedFields?.['llmProvider'];
  if (provider === undefined) return [];
  return [
    provider === 'offline'
      ? 'LLM: offline analyst (deterministic, no model; set GEMINI_API_KEY to use Gemini)'
      : `LLM: ${String(provider)}`,
  ];
}

/** Listens on 127.0.0.1 and writes local-api.json, where the CLI finds the API. */
async function serveApi(
  orchestrator: INestApplication,
  config: LocalStackConfig,
  token: string,
): Promise<{ url: string; dataDir: string }> {
  await orchestrator.listen(config.PORT, '127.0.0.1');
  const address = orchestrator.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  const dataDir = resolve(config.TDA_DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  // The token is local and regenerated on every start (unless TDA_API_TOKEN is set).
  writeFileSync(join(dataDir, LOCAL_API_FILE), `${JSON.stringify({ url, token }, null, 2)}\n`, {
    mode: 0o600,
  });
  return { url, dataDir };
}

/**
 * What one process shares with a worker beyond the run store, bus and artifacts: the paper
 * accounts (in memory mode a worker's own store would be empty; on the emulators and GCP the
 * worker opens the same Firestore collection itself, as its main.ts does).
 */
function sharedWith(stepType: string, backends: Pick<Backends, 'accounts'>): unknown {
  return stepType === 'ACCOUNT_EXPORT' ? { accounts: backends.accounts } : undefined;
}

/**
 * The local admin `npm start` prints for signing in (the console, or TDA_API_TOKEN for the CLI):
 * a stored API token of the default owner with the admin role, new on every start and revoked
 * when the stack stops, so no credential outlives the process.
 */
async function createLocalAdmin(
  identities: IdentityStore,
  ownerId: string,
): Promise<{ token: string; revoke: () => Promise<void> }> {
  const issued = issueApiToken();
  await identities.createToken(issued.hash, {
    tokenId: issued.tokenId,
    ownerId,
    role: 'admin',
    name: 'npm start (local admin)',
    createdAt: new Date().toISOString(),
    createdBy: 'local-stack',
  });
  return {
    token: issued.token,
    revoke: async () => {
      await identities.revokeToken(issued.tokenId, new Date().toISOString());
    },
  };
}

/** `npm start` sizes its demo recommendation against the paper account `demo`. */
async function demoAccountLine(
  backends: Pick<Backends, 'accounts'>,
  ownerId: string,
): Promise<string[]> {
  const { created, account } = await ensureDemoAccount(backends.accounts, ownerId);
  if (account.ownerId !== ownerId) return [];
  return [
    `paper account '${account.accountId}' ${created ? 'created' : 'found'} (${account.cash} ${account.quoteCurrency} cash; npx tda accounts show ${account.accountId})`,
  ];
}

/** Every registered worker (LOCAL_WORKERS, or the hooks') not omitted, over the shared adapters. */
async function startWorkers(parts: {
  env: EnvSource;
  adapters: (service: LocalService) => {
    store: FlowRunStore;
    broker: MessageBroker;
    artifacts: Backends['artifacts'];
    metrics: ReturnType<typeof createMetrics>;
  };
  backends: Pick<Backends, 'accounts' | 'checkpoints'>;
  loggerFor: (service: string) => Logger;
  hooks: LocalStackHooks;
}): Promise<ComposedWorker<AnyStepHandler>[]> {
  const { hooks } = parts;
  const omitted = new Set<string>(hooks.omitWorkers ?? []);
  const started: ComposedWorker<AnyStepHandler>[] = [];
  try {
    for (const definition of hooks.workers ?? LOCAL_WORKERS) {
      const { service, stepType } = definition.descriptor;
      if (omitted.has(stepType)) continue;
      const decorate = hooks.handler;
      const composed = await composeWorker(definition, {
        env: parts.env,
        ...parts.adapters(service),
        checkpoints: parts.backends.checkpoints,
        logger: parts.loggerFor(service),
        overrides: sharedWith(stepType, parts.backends),
        ...(hooks.workerPolicy === undefined ? {} : { policy: hooks.workerPolicy }),
        ...(decorate === undefined ? {} : { decorate: (h) => decorate(h, service) }),
      }).catch(skipDisabled(parts.loggerFor(service)));
      if (composed !== undefined) started.push(composed);
    }
    return started;
  } catch (error) {
    for (const worker of started) await worker.close().catch(() => undefined);
    throw error;
  }
}

/** A worker its config switches off (TDA_BACKTEST_ENABLED=false) is left out, said in the log. */
function skipDisabled(logger: Logger): (error: unknown) => undefined {
  return (error) => {
    if (!(error instanceof WorkerDisabledError)) throw error;
    logEvent(logger, 'info', 'service_disabled', { reason: error.reason }, error.message);
    return undefined;
  };
}
