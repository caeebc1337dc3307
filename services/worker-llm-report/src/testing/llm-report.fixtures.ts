import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  validate,
  type FlowRun,
  type FlowStep,
  type LlmPrompt,
  type LlmReportFile,
  type OhlcvExport,
  type StepReadyMessage,
} from '@tda/contracts';
import { applyPatch, createRun, stepPatch, type RunPatch } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import {
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  InMemoryPromptRegistry,
  LlmStepRuntime,
  type LlmClient,
  type LlmStepRuntimeOptions,
  type PromptRegistry,
} from '@tda/llm';
import {
  chartsManifestFor,
  syntheticOhlcvExport,
  tinyPng,
  validReportOutput,
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
import { serializeReport } from '../llm-report-file';
import { LlmReportHandler } from '../llm-report.handler';

/**
 * Shared test fixtures of the LLM_REPORT worker: a flow-1 run (scheduled_month_week_report_v1)
 * whose OHLCV, charts and 1M report steps SUCCEEDED with real artifacts and whose 1w report step
 * is READY, and a runner that delivers that step to the real StepHarness with the real
 * LlmReportHandler over a real LlmStepRuntime (in-memory store, artifacts, registry and
 * publisher), counting handler executions, registry reads and artifact reads.
 */
export const FIXTURE_NOW = new Date('2026-11-21T08:00:00Z');
export const REPORT_1M = 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash';
export const REPORT_1W = 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash';
export const CHARTS_1W = 'charts:1w:ctpl_default_v1';
export const CHARTS_1M = 'charts:1M:ctpl_default_v1';

export function uriOf(runId: string, timeframe: string, stepId: string): string {
  return `gs://tda-artifacts/runs/${runId}/${timeframe}/${stepId}.json`;
}

export interface LlmReportFixture {
  run: FlowRun;
  /** Replaceable in a `before` hook (e.g. a copy holding an oversized chart). */
  artifacts: InMemoryArtifactStore;
  reportUri: string;
}

function ohlcvFor(runId: string, timeframe: '1M' | '1w'): OhlcvExport {
  return {
    ...syntheticOhlcvExport({ timeframe, count: 60 }),
    runId,
    stepId: `ohlcv_export:${timeframe}`,
  };
}

/** The SUCCEEDED 1M report given to the 1w step as context. */
export function previousReport(runId: string): LlmReportFile {
  const base = `gs://tda-artifacts/runs/${runId}/1M`;
  return {
    metadata: {
      schemaVersion: 1,
      runId,
      stepId: REPORT_1M,
      symbol: 'BTC-USDT',
      timeframe: '1M',
      promptId: 'prompt_month_v1',
      schemaId: 'llm_report_output_v1',
      modelName: 'gemini-2.5-flash',
      provider: 'gemini',
      inputs: {
        ohlcvGcsUri: `${base}/ohlcv_export:1M.json`,
        chartsManifestGcsUri: `${base}/${CHARTS_1M}.json`,
        chartGcsUris: [],
        previousReportGcsUris: [],
      },
      llm: { finishReason: 'STOP', attempts: { total: 1 } },
    },
    output: validReportOutput('## 1M\n\nMonthly trend up.') as LlmReportFile['output'],
  };
}

/** A flow-1 run created at `now` with every upstream of the 1w report SUCCEEDED. */
export async function flowFixture(now: Date = FIXTURE_NOW): Promise<LlmReportFixture> {
  const created = createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: { symbol: 'BTC-USDT' },
    ownerId: 'user-1',
    trigger: { type: 'SCHEDULER', source: 'test' },
    now,
    random: seededRandom(7),
  });
  const runId = created.runId;
  const artifacts = new InMemoryArtifactStore();
  const put = (uri: string, data: Buffer, contentType = 'application/json') =>
    artifacts.put(uri, data, { contentType });
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));

  let patch: RunPatch = { status: 'RUNNING', startedAt: now.toISOString() };
  const succeed = (stepId: string, timeframe: string) => {
    patch = {
      ...patch,
      ...stepPatch(stepId, {
        status: 'SUCCEEDED',
        finishedAt: now.toISOString(),
        outputs: { gcs_uri: uriOf(runId, timeframe, stepId) },
      }),
    };
  };
  for (const timeframe of ['1M', '1w'] as const) {
    const ohlcv = ohlcvFor(runId, timeframe);
    await put(uriOf(runId, timeframe, ohlcv.stepId), json(ohlcv));
    succeed(ohlcv.stepId, timeframe);
    const manifest = chartsManifestFor(ohlcv, [
      {
        chartTemplateId: 'ctpl_default_v1',
        kind: 'candlestick',
        description: `BTC-USDT ${timeframe} candlesticks`,
        bytes: tinyPng().length,
      },
    ]);
    await put(uriOf(runId, timeframe, manifest.stepId), json(manifest));
    for (const item of manifest.items) await put(item.gcs_uri, tinyPng(), 'image/png');
    succeed(manifest.stepId, timeframe);
  }
  await put(uriOf(runId, '1M', REPORT_1M), serializeReport(previousReport(runId)));
  succeed(REPORT_1M, '1M');
  patch = { ...patch, ...stepPatch(REPORT_1W, { status: 'READY' }) };
  return {
    run: applyPatch(created, patch),
    artifacts,
    reportUri: uriOf(runId, '1w', REPORT_1W),
  };
}

/** Errors the next reads of a registry throw, in order (registry unavailable). */
export interface RegistryFaults {
  getPrompt?: Error[];
  getSchema?: Error[];
}

/**
 * A PromptRegistry decorator counting reads (a retry after the model was asked must not read the
 * registry again), optionally failing the next reads.
 */
export class CountingPromptRegistry implements PromptRegistry {
  getPromptCalls = 0;
  getSchemaCalls = 0;
  private readonly faults: Required<RegistryFaults>;

  constructor(
    readonly inner: PromptRegistry,
    faults: RegistryFaults = {},
  ) {
    this.faults = {
      getPrompt: [...(faults.getPrompt ?? [])],
      getSchema: [...(faults.getSchema ?? [])],
    };
  }

  async getPrompt(promptId: string): ReturnType<PromptRegistry['getPrompt']> {
    this.getPromptCalls += 1;
    const fault = this.faults.getPrompt.shift();
    if (fault !== undefined) throw fault;
    return this.inner.getPrompt(promptId);
  }

  async getSchema(schemaId: string): ReturnType<PromptRegistry['getSchema']> {
    this.getSchemaCalls += 1;
    const fault = this.faults.getSchema.shift();
    if (fault !== undefined) throw fault;
    return this.inner.getSchema(schemaId);
  }
}

/** Calls of a handler as the harness made them (a decorator, like the chaos suite's). */
export interface HandlerCalls {
  executions: number;
  recoveries: number;
}

/** `handler` with its execute/recover calls counted into `calls`. */
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

export interface RunLlmReportStepOptions {
  client: LlmClient;
  prompts?: readonly LlmPrompt[];
  /** A patch applied to the fixture run before it is stored. */
  patch?: (run: FlowRun) => RunPatch;
  before?: (fixture: LlmReportFixture) => Promise<void>;
  /** Store and harness clock; default fixed at FIXTURE_NOW. */
  clock?: () => Date;
  /** When the fixture run is created; default FIXTURE_NOW. */
  now?: Date;
  /** Merged over {heartbeatMs: 30 s, timeoutMs: 780 s}. */
  policy?: Partial<StepHarnessPolicy>;
  /** Errors the registry throws on its next reads. */
  registryFaults?: RegistryFaults;
  /** LLM step runtime options besides the registry, the client and the logger (default: instant sleep). */
  runtime?: Omit<LlmStepRuntimeOptions, 'registry' | 'client' | 'logger'>;
}

export interface LlmReportStepRun {
  outcome: HarnessOutcome;
  /** The report step as stored after the delivery. */
  step: FlowStep;
  stored: FlowRun;
  /** Every create() and update() patch the harness sent, for leak checks. */
  store: CountingFlowRunStore;
  publisher: RecordingPublisher;
  log: MemoryLogger;
  /** The report artifact, or null when none was written. */
  bytes: Buffer | null;
  reportUri: string;
  /** handler.execute / handler.recover calls the harness made in this delivery. */
  calls: HandlerCalls;
  /** Prompt registry reads of the delivery. */
  registry: CountingPromptRegistry;
  /** The artifact store the harness used (reads counted from the delivery on). */
  artifacts: CountingArtifactStore;
}

/** Delivers one step-ready message for the 1w report to a fresh harness and returns the result. */
export async function runLlmReportStep(
  options: RunLlmReportStepOptions,
): Promise<LlmReportStepRun> {
  const fixture = await flowFixture(options.now);
  const run =
    options.patch === undefined ? fixture.run : applyPatch(fixture.run, options.patch(fixture.run));
  await options.before?.(fixture);
  const artifacts = new CountingArtifactStore(fixture.artifacts);
  const clock = options.clock ?? ((): Date => FIXTURE_NOW);
  const store = new CountingFlowRunStore(new InMemoryFlowRunStore({ clock }));
  await store.create(run);
  const log = createMemoryLogger();
  const registry = new CountingPromptRegistry(
    new InMemoryPromptRegistry({
      prompts: options.prompts ?? DEFAULT_PROMPTS,
      schemas: DEFAULT_SCHEMAS,
    }),
    options.registryFaults,
  );
  const runtime = new LlmStepRuntime({
    sleep: async () => undefined,
    ...options.runtime,
    registry,
    client: options.client,
    logger: log.logger,
  });
  const calls: HandlerCalls = { executions: 0, recoveries: 0 };
  const publisher = new RecordingPublisher();
  const harness = new StepHarness({
    handler: countingHandler(new LlmReportHandler(runtime), calls),
    store,
    artifacts,
    publisher,
    logger: log.logger,
    clock,
    owner: 'llm-worker-test',
    policy: { heartbeatMs: 30_000, timeoutMs: 780_000, ...options.policy },
    random: () => 0,
  });
  const message: StepReadyMessage = {
    runId: run.runId,
    stepId: REPORT_1W,
    stepType: 'LLM_REPORT',
    attempt: 0,
    dispatchedAt: clock().toISOString(),
  };
  const outcome = await harness.handleStepReady(message, { deliveryAttempt: 1 });
  await harness.shutdown();
  const stored = await store.inner.get(run.runId);
  const step = stored?.run.steps[REPORT_1W];
  if (stored === undefined || stored === null || step === undefined) {
    throw new Error('report step vanished');
  }
  // Read past the counters: they say what the delivery did.
  const exists = await artifacts.inner.exists(fixture.reportUri);
  const bytes = exists ? await artifacts.inner.read(fixture.reportUri) : null;
  return {
    outcome,
    step,
    stored: stored.run,
    store,
    publisher,
    log,
    bytes,
    reportUri: fixture.reportUri,
    calls,
    registry,
    artifacts,
  };
}

export async function snapshot(store: InMemoryArtifactStore): Promise<[string, Buffer][]> {
  const out: [string, Buffer][] = [];
  for (const uri of store.list()) out.push([uri, await store.read(uri)]);
  return out;
}

/** Parses and validates a report artifact (throws when it is missing or invalid). */
export function parseReport(bytes: Buffer | null): LlmReportFile {
  if (bytes === null) throw new Error('no report artifact');
  const checked = validate.llmReportFile(JSON.parse(bytes.toString('utf8')));
  if (!checked.ok) throw new Error(`report invalid: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}
