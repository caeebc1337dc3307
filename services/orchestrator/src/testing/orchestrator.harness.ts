import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import type { StepReadyMessage, StepStatus, StepType } from '@tda/contracts';
import { InMemoryArtifactStore, type ArtifactStore } from '@tda/artifacts';
import { decideClaim, decideFinalize } from '@tda/flow-engine';
import { seededRandom, T0 } from '@tda/flow-engine/testing';
import {
  InMemoryFlowRunStore,
  InMemoryScheduleStore,
  updateWithRetry,
  type FlowRunStore,
  type ScheduleStore,
} from '@tda/flow-store';
import {
  BrokerPublisher,
  buildTopology,
  InMemoryBroker,
  stepReadySubscription,
  type MessageBroker,
  type MessageAttributes,
  type SubscriptionHandle,
} from '@tda/messaging';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { InMemoryReportIndexStore, type ReportIndexStore } from '@tda/report-index';
import { InMemoryIdentityStore, issueApiToken, type IdentityStore, type Role } from '@tda/identity';
import type {
  GoogleUserIdTokenVerifier,
  IapJwtVerifier,
  IdTokenVerifier,
} from '@tda/service-runtime';
import { loadOrchestratorConfig, type OrchestratorConfig } from '../config';
import { createOrchestratorApp } from '../orchestrator.app';
import type { MarketCoverage } from '../runs/run-preflight.service';
import { Reconciler } from '../reconcile/reconciler.service';

export const TEST_TOKEN = 'test-token-0123456789abcdef';

/** A clock tests move by hand; decisions and store stamps read it. */
export class ManualClock {
  private current: Date;

  constructor(start: Date = T0) {
    this.current = new Date(start);
  }

  readonly now = (): Date => new Date(this.current);

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export interface HttpResult {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text (e.g. malformed JSON); wins over `body`. */
  rawBody?: string;
  /** undefined: the test token; null: no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
}

export interface TestOrchestrator {
  app: INestApplication;
  baseUrl: string;
  store: FlowRunStore;
  broker: MessageBroker;
  artifacts: ArtifactStore;
  reportIndex: ReportIndexStore;
  logs: MemoryLogger;
  clock: ManualClock;
  config: OrchestratorConfig;
  reconciler: Reconciler;
  identities: IdentityStore;
  schedules: ScheduleStore;
  /** A stored API token for `ownerId` with `role` (created straight in the store). */
  tokenFor(ownerId: string, role?: Role): Promise<string>;
  request(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  store?: FlowRunStore;
  broker?: MessageBroker;
  artifacts?: ArtifactStore;
  /** Default: an empty InMemoryReportIndexStore. */
  reportIndex?: ReportIndexStore;
  clock?: ManualClock;
  /** Default true: listen on a free port. */
  listen?: boolean;
  /** Accept Google ID tokens of one principal too (tests sign them with OidcTestIssuer). */
  adminOidcVerifier?: IdTokenVerifier;
  userOidcVerifier?: Pick<GoogleUserIdTokenVerifier, 'verify'>;
  iapVerifier?: Pick<IapJwtVerifier, 'verify'>;
  /** Default: an empty InMemoryIdentityStore. */
  identities?: IdentityStore;
  /** Default: an empty InMemoryScheduleStore (a second instance may share the first's). */
  schedules?: ScheduleStore;
  /** Default: every symbol and timeframe has data up to TEST_DATA_END (anyMarketCoverage). */
  marketData?: MarketCoverage;
  /** What close() gives HTTP requests in progress (default: the app's). */
  httpDrainMs?: number;
}

/** Where the harness's default market data ends: the default asOf of its runs. */
export const TEST_DATA_END = '2026-09-20T00:00:00Z';

/** Coverage for any symbol and timeframe: data from 2017 up to `end` (default TEST_DATA_END). */
export function anyMarketCoverage(end = TEST_DATA_END): MarketCoverage {
  return {
    coverage: (symbol, timeframe) =>
      Promise.resolve({
        symbol,
        timeframe,
        from: Date.parse('2017-08-17T00:00:00Z'),
        to: Date.parse(end),
        source: 'test coverage',
      }),
  };
}

/** A broker with the production topology at 1/100 of its durations (backoff 100 ms...). */
export function makeTestBroker(prefix = 'tda'): InMemoryBroker {
  const broker = new InMemoryBroker({ timeScale: 0.01 });
  broker.applyTopology(buildTopology({ prefix }));
  return broker;
}

/** The orchestrator app on a free port over in-memory adapters (or the ones given). */
export async function startTestOrchestrator(options: StartOptions = {}): Promise<TestOrchestrator> {
  const clock = options.clock ?? new ManualClock();
  const store = options.store ?? new InMemoryFlowRunStore({ clock: clock.now });
  const broker = options.broker ?? makeTestBroker();
  const artifacts = options.artifacts ?? new InMemoryArtifactStore();
  const reportIndex = options.reportIndex ?? new InMemoryReportIndexStore();
  const identities = options.identities ?? new InMemoryIdentityStore();
  const schedules = options.schedules ?? new InMemoryScheduleStore({ clock: clock.now });
  const logs = createMemoryLogger({ service: 'orchestrator-test', level: 'debug' });
  const config = loadOrchestratorConfig({
    TDA_API_TOKEN: TEST_TOKEN,
    TDA_RECONCILE_INTERVAL_MS: '0',
    TDA_SCHEDULE_TICK_MS: '0',
    ...options.env,
  });
  const app = await createOrchestratorApp({
    store,
    broker,
    artifacts,
    reportIndex,
    logger: logs.logger,
    clock: clock.now,
    random: seededRandom(7),
    config,
    swaggerUi: false,
    drainTimeoutMs: 2_000,
    marketData: options.marketData ?? anyMarketCoverage(),
    identities,
    schedules,
    ...(options.adminOidcVerifier === undefined
      ? {}
      : { adminOidcVerifier: options.adminOidcVerifier }),
    ...(options.userOidcVerifier === undefined
      ? {}
      : { userOidcVerifier: options.userOidcVerifier }),
    ...(options.iapVerifier === undefined ? {} : { iapVerifier: options.iapVerifier }),
    ...(options.httpDrainMs === undefined ? {} : { httpDrainMs: options.httpDrainMs }),
  });
  const tokenFor = async (ownerId: string, role: Role = 'user'): Promise<string> => {
    const issued = issueApiToken();
    await identities.createToken(issued.hash, {
      tokenId: issued.tokenId,
      ownerId,
      role,
      name: `test ${ownerId}`,
      createdAt: clock.now().toISOString(),
      createdBy: 'operator',
    });
    return issued.token;
  };
  await app.startAllMicroservices();
  let baseUrl = '';
  if (options.listen ?? true) {
    await app.listen(0, '127.0.0.1');
    const address: unknown = app.getHttpServer().address();
    const port =
      typeof address === 'object' && address !== null && 'port' in address ? address.port : 0;
    baseUrl = `http://127.0.0.1:${String(port)}`;
  }
  const request = async (
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<HttpResult> => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? TEST_TOKEN : opts.token;
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  };
  return {
    app,
    baseUrl,
    store,
    broker,
    artifacts,
    reportIndex,
    identities,
    schedules,
    tokenFor,
    logs,
    clock,
    config,
    reconciler: app.get(Reconciler),
    request,
    close: () => app.close(),
  };
}

export interface ReceivedStepReady {
  body: StepReadyMessage;
  attributes: MessageAttributes;
  deliveryAttempt: number;
}

/** Subscribes a test consumer to step-ready subscriptions; acks and records everything. */
export async function collectStepReady(
  broker: MessageBroker,
  stepTypes: readonly StepType[],
  prefix = 'tda',
): Promise<{ received: ReceivedStepReady[]; close(): Promise<void> }> {
  const received: ReceivedStepReady[] = [];
  const handles: SubscriptionHandle[] = [];
  for (const stepType of stepTypes) {
    handles.push(
      await broker.subscribe(
        stepReadySubscription(stepType, prefix),
        (message) => {
          received.push({
            body: JSON.parse(message.data.toString('utf8')) as StepReadyMessage,
            attributes: message.attributes,
            deliveryAttempt: message.deliveryAttempt,
          });
          message.ack();
        },
        { maxInFlight: 100 },
      ),
    );
  }
  return {
    received,
    close: async () => {
      await Promise.all(handles.map((h) => h.close()));
    },
  };
}

export interface WorkerOutcome {
  status: Extract<StepStatus, 'SUCCEEDED' | 'FAILED'>;
}

/**
 * What a worker does, with the real flow-engine decisions: claim (READY -> RUNNING), finalize
 * (SUCCEEDED or FAILED) through the store, then the step event (published separately by the
 * caller with `publishStepEvent`). Returns the attempt used.
 */
export async function simulateWorker(
  store: FlowRunStore,
  runId: string,
  stepId: string,
  clock: () => Date,
  outcome: WorkerOutcome = { status: 'SUCCEEDED' },
): Promise<number> {
  const owner = 'test-worker/1';
  const claimed = await updateWithRetry(store, runId, (run) => {
    const decision = decideClaim(run, stepId, { now: clock(), owner, leaseMs: 60_000 });
    return decision.kind === 'claim'
      ? { kind: 'write', patch: decision.patch, result: decision.attempt }
      : { kind: 'noop', reason: decision.kind, result: 0 };
  });
  if (claimed.kind !== 'written') throw new Error(`claim of ${stepId} did not happen`);
  const finalized = await updateWithRetry(store, runId, (run) => {
    const decision = decideFinalize(run, stepId, {
      now: clock(),
      owner,
      outcome:
        outcome.status === 'SUCCEEDED'
          ? { status: 'SUCCEEDED', gcsUri: `gs://tda-artifacts/runs/${runId}/${stepId}.json` }
          : {
              status: 'FAILED',
              error: { code: 'MARKET_DATA_UNAVAILABLE', message: 'no data', retryable: true },
            },
    });
    return decision.kind === 'finalize'
      ? { kind: 'write', patch: decision.patch, result: undefined }
      : { kind: 'noop', reason: decision.kind, result: undefined };
  });
  if (finalized.kind !== 'written') throw new Error(`finalize of ${stepId} did not happen`);
  return claimed.result;
}

/** Publishes a step event as a worker would (BrokerPublisher.publishStepEvent). */
export function publishStepEvent(
  broker: MessageBroker,
  event: {
    runId: string;
    stepId: string;
    stepType: StepType;
    status: StepStatus;
    attempt: number;
    at: string;
  },
  prefix = 'tda',
): Promise<string> {
  return new BrokerPublisher({ publisher: broker, prefix }).publishStepEvent(event);
}
