import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  validate,
  type AccountSnapshot,
  type FlowRun,
  type FlowStep,
  type LlmRecommendationFile,
  type StepReadyMessage,
} from '@tda/contracts';
import { applyPatch, createRun, reportIdFor, stepPatch, type RunPatch } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import {
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  InMemoryPromptRegistry,
  LlmStepRuntime,
  type LlmClient,
  type LlmStepRuntimeOptions,
} from '@tda/llm';
import {
  accountSnapshotFixture,
  RECO_AS_OF,
  recommendationInputReport,
  recommendationOhlcv,
  reportStepIdFor,
  type ReportFixture,
} from '@tda/llm/testing';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import {
  StepHarness,
  type AnyStepHandler,
  type HarnessOutcome,
  type StepHarnessPolicy,
} from '@tda/worker-kit';
import {
  CountingArtifactStore,
  CountingFlowRunStore,
  RecordingPublisher,
} from '@tda/worker-kit/testing';
import { LlmRecommendationHandler } from '../llm-recommendation.handler';

/**
 * Shared test fixtures of the LLM_RECOMMENDATION worker: a flow-4 run
 * (recommendation_with_account_v1, asOf 2026-09-20T00:00:00Z) whose reports, OHLCV exports and
 * account snapshot SUCCEEDED with real artifacts and whose recommendation step is READY, and a
 * runner delivering that step to the real StepHarness with the real handler over a real
 * LlmStepRuntime (in-memory store, artifacts, registry and publisher).
 */
export const FIXTURE_NOW = new Date('2026-09-20T08:00:00Z');
export const RECO_STEP = 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash';
export const ACCOUNT_STEP = 'account_export';
export const OHLCV_4H = 'ohlcv_export:4h';
export const TIMEFRAMES = ['1w', '1d', '4h'] as const;

/** gs:// URI of a step's primary artifact (`_` for steps without a timeframe). */
export function uriOf(runId: string, timeframe: string, stepId: string): string {
  return `gs://tda-artifacts/runs/${runId}/${timeframe}/${stepId}.json`;
}

export interface RecommendationFixtureOptions {
  now?: Date;
  /** The reports' trend readings per timeframe (default: all bullish, moderate). */
  reports?: Partial<Record<(typeof TIMEFRAMES)[number], Omit<ReportFixture, 'timeframe'>>>;
  /** The account snapshot (default: no position); null = the step reads no account. */
  account?: Partial<AccountSnapshot> | null;
}

export interface RecommendationFixture {
  run: FlowRun;
  artifacts: InMemoryArtifactStore;
  recoUri: string;
  /** reportIdFor(runId, stepId) of the three reports, longest timeframe first. */
  reportIds: string[];
}

function succeededSteps(run: FlowRun): string[] {
  return Object.keys(run.steps).filter((id) => id !== RECO_STEP);
}

/** Drops the account from the recommendation step (a run whose inputs name none). */
function withoutAccount(run: FlowRun): RunPatch {
  const step = run.steps[RECO_STEP];
  if (step === undefined) throw new Error('fixture: no recommendation step');
  const { accountStepId: _a, ...inputs } = step.inputs;
  return stepPatch(RECO_STEP, {
    inputs,
    dependsOn: step.dependsOn.filter((id) => id !== ACCOUNT_STEP),
  });
}

/** A flow-4 run with every upstream of the recommendation SUCCEEDED and their artifacts stored. */
export async function recommendationFixture(
  options: RecommendationFixtureOptions = {},
): Promise<RecommendationFixture> {
  const now = options.now ?? FIXTURE_NOW;
  const created = createRun({
    flowKey: 'recommendation_with_account_v1',
    scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: RECO_AS_OF },
    ownerId: 'user-1',
    trigger: { type: 'USER', source: 'test' },
    now,
    random: seededRandom(11),
  });
  const { runId } = created;
  const artifacts = new InMemoryArtifactStore();
  const put = (uri: string, value: unknown) =>
    artifacts.put(uri, Buffer.from(JSON.stringify(value)), { contentType: 'application/json' });
  let patch: RunPatch = { status: 'RUNNING', startedAt: now.toISOString() };
  for (const stepId of succeededSteps(created)) {
    const timeframe = created.steps[stepId]?.timeframe ?? '_';
    patch = {
      ...patch,
      ...stepPatch(stepId, {
        status: 'SUCCEEDED',
        finishedAt: now.toISOString(),
        outputs: { gcs_uri: uriOf(runId, timeframe, stepId) },
      }),
    };
  }
  await put(uriOf(runId, '4h', OHLCV_4H), recommendationOhlcv({ runId }));
  for (const timeframe of TIMEFRAMES) {
    const stepId = reportStepIdFor(timeframe);
    const report = recommendationInputReport({ runId, timeframe, ...options.reports?.[timeframe] });
    await put(uriOf(runId, timeframe, stepId), report);
  }
  if (options.account !== null) {
    await put(uriOf(runId, '_', ACCOUNT_STEP), accountSnapshotFixture(options.account, runId));
  }
  patch = { ...patch, ...stepPatch(RECO_STEP, { status: 'READY' }) };
  let run = applyPatch(created, patch);
  if (options.account === null) run = applyPatch(run, withoutAccount(run));
  return {
    run,
    artifacts,
    recoUri: uriOf(runId, '_', RECO_STEP),
    reportIds: TIMEFRAMES.map((tf) => reportIdFor(runId, reportStepIdFor(tf))),
  };
}

/** A decorator counting the harness's execute/recover calls. */
export interface HandlerCalls {
  executions: number;
  recoveries: number;
}

export function countingHandler(handler: AnyStepHandler, calls: HandlerCalls): AnyStepHandler {
  const { recover } = handler;
  return {
    descriptor: handler.descriptor,
    execute: (context: never) => {
      calls.executions += 1;
      return handler.execute(context);
    },
    ...(recover === undefined
      ? {}
      : {
          recover: (existing: never, context: never) => {
            calls.recoveries += 1;
            return recover.call(handler, existing, context);
          },
        }),
  };
}

export interface RunRecommendationStepOptions extends RecommendationFixtureOptions {
  client: LlmClient;
  /** Runs after the fixture is built, before the delivery (plant an artifact, ...). */
  before?: (fixture: RecommendationFixture) => Promise<void>;
  clock?: () => Date;
  policy?: Partial<StepHarnessPolicy>;
  runtime?: Omit<LlmStepRuntimeOptions, 'registry' | 'client' | 'logger' | 'outputKind'>;
}

export interface RecommendationStepRun {
  outcome: HarnessOutcome;
  step: FlowStep;
  stored: FlowRun;
  store: CountingFlowRunStore;
  publisher: RecordingPublisher;
  log: MemoryLogger;
  /** The recommendation artifact, or null when none was written. */
  bytes: Buffer | null;
  recoUri: string;
  reportIds: string[];
  calls: HandlerCalls;
}

/** Delivers one step-ready message for the recommendation to a fresh harness. */
export async function runRecommendationStep(
  options: RunRecommendationStepOptions,
): Promise<RecommendationStepRun> {
  const fixture = await recommendationFixture(options);
  await options.before?.(fixture);
  const artifacts = new CountingArtifactStore(fixture.artifacts);
  const clock = options.clock ?? ((): Date => options.now ?? FIXTURE_NOW);
  const store = new CountingFlowRunStore(new InMemoryFlowRunStore({ clock }));
  await store.create(fixture.run);
  const log = createMemoryLogger();
  const runtime = new LlmStepRuntime({
    sleep: async () => undefined,
    ...options.runtime,
    registry: new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS, schemas: DEFAULT_SCHEMAS }),
    client: options.client,
    logger: log.logger,
    outputKind: 'LLM_RECOMMENDATION_OUTPUT',
  });
  const calls: HandlerCalls = { executions: 0, recoveries: 0 };
  const publisher = new RecordingPublisher();
  const harness = new StepHarness({
    handler: countingHandler(new LlmRecommendationHandler(runtime), calls),
    store,
    artifacts,
    publisher,
    logger: log.logger,
    clock,
    owner: 'reco-worker-test',
    policy: { heartbeatMs: 30_000, timeoutMs: 780_000, ...options.policy },
    random: () => 0,
  });
  const message: StepReadyMessage = {
    runId: fixture.run.runId,
    stepId: RECO_STEP,
    stepType: 'LLM_RECOMMENDATION',
    attempt: 0,
    dispatchedAt: clock().toISOString(),
  };
  const outcome = await harness.handleStepReady(message, { deliveryAttempt: 1 });
  await harness.shutdown();
  const stored = (await store.inner.get(fixture.run.runId))?.run;
  const step = stored?.steps[RECO_STEP];
  if (stored === undefined || step === undefined) throw new Error('recommendation step vanished');
  const exists = await artifacts.inner.exists(fixture.recoUri);
  return {
    outcome,
    step,
    stored,
    store,
    publisher,
    log,
    bytes: exists ? await artifacts.inner.read(fixture.recoUri) : null,
    recoUri: fixture.recoUri,
    reportIds: fixture.reportIds,
    calls,
  };
}

/** Parses and validates a recommendation artifact (throws when it is missing or invalid). */
export function parseRecommendation(bytes: Buffer | null): LlmRecommendationFile {
  if (bytes === null) throw new Error('no recommendation artifact');
  const checked = validate.llmRecommendationFile(JSON.parse(bytes.toString('utf8')));
  if (!checked.ok) throw new Error(`recommendation invalid: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

/** Every stored object of a store (to copy a fixture into a booted worker's backends). */
export async function snapshot(store: InMemoryArtifactStore): Promise<[string, Buffer][]> {
  const out: [string, Buffer][] = [];
  for (const uri of store.list()) out.push([uri, await store.read(uri)]);
  return out;
}
