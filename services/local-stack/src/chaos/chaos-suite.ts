import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { LocalArtifactStore, sha256Hex } from '@tda/artifacts';
import type { FlowRun } from '@tda/contracts';
import { stepEventsSubscription, stepReadySubscription } from '@tda/messaging';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { ApiClient } from '@tda/service-cli';
import { startLocalStack, type LocalStack } from '../local-stack';
import { ChaosBroker } from './chaos-broker';
import type {
  ChaosObservations,
  Claim,
  Dispatch,
  DrivenRun,
  ReplayObservation,
} from './chaos-checks';
import { ChaosController } from './chaos-controller';
import { ChaosModelServer } from './chaos-model.server';
import { planChaos, REPORT_STEP, type RunPlan, type Timeframe } from './chaos-plan';
import { ChaosFlowRunStore } from './chaos-store';
import { countingHandler, type ExecutionRecord } from './counting-handler';
import { RogueWriter } from './rogue-writer';
import { WorkerProcess, type LogRecord } from '../testing/worker-process';

export const CHAOS_FLOW_KEY = 'scheduled_month_week_report_v1';
const SYMBOL = 'BTC-USDT';
const LLM_WORKER_MAIN = 'services/local-stack/src/chaos/chaos-llm-worker.main.ts';
const TERMINAL_RUN = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
const ACTIVE_STEP = new Set(['PENDING', 'READY', 'RUNNING']);
/** Log events the report counts: how much recovery work the faults caused. */
const NOTABLE_EVENTS = [
  'step_claim_conflict',
  'step_finalize_conflict',
  'step_noop',
  'step_recovered',
  'step_retry',
  'lease_lost',
  'message_handler_failed',
  'structured_output_repair_attempt_started',
] as const;

/**
 * Timings of the suite. Short, so that a lease expires and a model call times out within
 * seconds, but with enough slack that a loaded 2-core machine does not lose a live lease (a
 * heartbeat every second against a five-second lease).
 */
export const CHAOS_TIMINGS = {
  reconcileIntervalMs: 500,
  readyRepublishAfterMs: 1_500,
  runDeadlineSeconds: 150,
  /** The LLM worker process. */
  llm: {
    leaseMs: 5_000,
    heartbeatMs: 1_000,
    stepTimeoutMs: 12_000,
    retryBaseDelayMs: 300,
    requestDeadlineMs: 1_500,
    finalizeBudgetMs: 1_000,
    minRepairWindowMs: 2_000,
  },
  /** The OHLCV and chart workers in the test process. */
  inProcess: {
    leaseMs: 10_000,
    heartbeatMs: 2_000,
    timeoutMs: 30_000,
    handlerRetryBaseDelayMs: 200,
    infraBaseDelayMs: 50,
  },
  /** One run: run and steps terminal within this. */
  settleTimeoutMs: 60_000,
} as const;

export interface ChaosSuiteOptions {
  root: string;
  emulators: { firestoreHost: string; pubsubHost: string };
  seed: number;
  runs: number;
  kills: number;
  /** Runs in flight at once (the kill runs always go alone). */
  concurrency: number;
  /** Variables every child process gets besides its own (e.g. HOME). */
  baseEnv?: Record<string, string>;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Relative path → size and mtime of every artifact file (what a replay must not touch). */
function snapshotFiles(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        const stat = statSync(path);
        out.set(relative(dir, path), `${stat.size}:${stat.mtimeMs}`);
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/**
 * The chaos suite's harness: the local stack on the emulators (own Firestore/Pub/Sub project, so
 * no other test file's runs are visible to its reconciler) with fault-injecting decorators, the
 * LLM_REPORT worker as a separate process talking to a scripted model endpoint, and the plan's
 * runs of flow 1 driven through the HTTP API.
 */
export class ChaosSuite {
  readonly chaos: ChaosController;
  readonly executions: ExecutionRecord[] = [];
  readonly driven: DrivenRun[] = [];
  readonly workerProcesses: WorkerProcess[] = [];
  private readonly loggers = new Map<string, MemoryLogger>();
  private readonly brokers: ChaosBroker[] = [];
  private readonly rogueWriters: RogueWriter[] = [];
  /** Owners of kill runs whose worker was killed (a fresh process holds nothing for them). */
  private readonly killedOwners = new Set<string>();
  private readonly dataDir: string;
  private readonly workDir: string;
  private readonly executionsFile: string;
  private readonly projectId: string;
  private readonly prefix: string;
  private stack: LocalStack | undefined;
  private model: ChaosModelServer | undefined;
  private llm: WorkerProcess | undefined;
  private startedAt = 0;
  private firstTriggerAt = 0;
  private finishedAt = 0;
  replay: ReplayObservation | undefined;
  private artifactCheck: { checked: number; problems: string[] } | undefined;

  constructor(private readonly options: ChaosSuiteOptions) {
    this.chaos = new ChaosController(
      planChaos({
        seed: options.seed,
        runs: options.runs,
        kills: options.kills,
        // The harness tries a finalize write infraMaxTries (3) times before it nacks: failing all
        // three makes the redelivery take the recovery path.
        finalizeFailures: 3,
        ownerPrefix: `chaos-${options.seed}`,
      }),
    );
    this.workDir = mkdtempSync(join(tmpdir(), 'tda-chaos-'));
    this.dataDir = join(this.workDir, 'data');
    this.executionsFile = join(this.workDir, 'executions.jsonl');
    const suffix = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
    this.projectId = `chaos-${suffix}`;
    this.prefix = `chaos${suffix}`.slice(0, 24);
  }

  get plan(): RunPlan[] {
    return this.chaos.plan.runs;
  }

  async start(): Promise<void> {
    this.startedAt = Date.now();
    this.model = await ChaosModelServer.start(this.chaos);
    const artifacts = new LocalArtifactStore({ dataDir: this.dataDir });
    const { inProcess } = CHAOS_TIMINGS;
    this.stack = await startLocalStack({
      env: {
        TDA_BACKEND: 'emulators',
        PORT: '0',
        TDA_DATA_DIR: this.dataDir,
        TDA_PUBSUB_PREFIX: this.prefix,
        TDA_RECONCILE_INTERVAL_MS: String(CHAOS_TIMINGS.reconcileIntervalMs),
        TDA_READY_REPUBLISH_AFTER_MS: String(CHAOS_TIMINGS.readyRepublishAfterMs),
        TDA_DEFAULT_RUN_DEADLINE_SECONDS: String(CHAOS_TIMINGS.runDeadlineSeconds),
      },
      loggerFor: (service) => this.logger(service).logger,
      emulators: { ...this.options.emulators, projectId: this.projectId },
      hooks: {
        store: (store, service) =>
          new ChaosFlowRunStore(store, {
            chaos: this.chaos,
            bindRuns: service === 'orchestrator',
            ...(service === 'orchestrator' ? {} : { failFinalize: { artifacts } }),
          }),
        broker: (broker, service) => {
          const decorated = new ChaosBroker(broker, { chaos: this.chaos, service });
          this.brokers.push(decorated);
          return decorated;
        },
        handler: (handler, service) =>
          countingHandler(handler, service, (record) => this.executions.push(record)),
        workerPolicy: { ...inProcess },
        omitWorkers: ['LLM_REPORT'],
      },
    });
    this.llm = await this.startLlmWorker();
  }

  /** Drives the runs without a worker kill, `concurrency` at a time. */
  async driveShared(): Promise<void> {
    this.firstTriggerAt = Date.now();
    const shared = this.plan.filter((r) => r.kill === undefined);
    let next = 0;
    await Promise.all(
      Array.from({ length: this.options.concurrency }, async () => {
        for (let item = shared[next++]; item !== undefined; item = shared[next++]) {
          this.driven.push(await this.driveRun(item));
        }
      }),
    );
    await this.quiesce();
  }

  /**
   * Drives the worker-kill runs, one at a time (the killed process holds nothing else). They
   * come after the replay: the Pub/Sub emulator keeps the streaming pull of a SIGKILLed
   * subscriber registered and goes on dispatching messages of that subscription to it, where
   * they are lost (the real service redelivers them after the ack deadline). Only the
   * reconciler's republish of READY steps gets a reclaimed step to the fresh process then; a
   * replay on that subscription would mostly vanish the same way and prove nothing.
   */
  async driveKills(): Promise<void> {
    for (const run of this.plan.filter((r) => r.kill !== undefined)) {
      this.driven.push(await this.driveRun(run));
    }
    await this.quiesce();
  }

  /** Copies still scheduled by the duplicating broker are part of the chaos: let them land. */
  private async quiesce(): Promise<void> {
    for (const broker of this.brokers) await broker.drain();
    await sleep(1_000);
    this.driven.sort((a, b) => a.plan.index - b.plan.index);
    this.finishedAt = Date.now();
  }

  /**
   * Replays everything so far with POST /admin/replay: every subscription is seeked to before
   * the first run, so each message the runs produced is delivered again. Then checks that no run
   * document changed version and no artifact was added or rewritten.
   */
  async replayAll(): Promise<ReplayObservation> {
    const stack = this.requireStack();
    const runIds = this.driven.flatMap((r) => (r.runId === undefined ? [] : [r.runId]));
    const versions = new Map<string, string>();
    for (const runId of runIds)
      versions.set(runId, (await stack.backends.store.get(runId))?.version ?? '');
    const files = snapshotFiles(this.dataDir);
    const delivered = (since: number): Set<string> =>
      new Set(
        this.allLogs()
          .filter((r) => r['event'] === 'message_acked' && Date.parse(String(r['time'])) >= since)
          .map((r) => `${String(r['subscription'])}|${String(r['messageId'])}`),
      );
    const before = delivered(0);
    const seekAt = Date.now();
    const subscriptions = [
      stepReadySubscription('OHLCV_EXPORT', this.prefix),
      stepReadySubscription('CHART_EXPORT', this.prefix),
      stepReadySubscription('LLM_REPORT', this.prefix),
      stepEventsSubscription(this.prefix),
    ];
    // Through the operator's endpoint: a dry run first (what each receiver would do), then the
    // real seek.
    const dryRun: Record<string, number> = {};
    const time = new Date(this.firstTriggerAt - 1_000).toISOString();
    for (const subscription of subscriptions) {
      for (const real of [false, true]) {
        const answer = await this.api().replay({ subscription, time, dryRun: !real });
        if (answer.seeked !== real) {
          throw new Error(`replay of ${subscription} (dryRun ${String(!real)}) did not seek`);
        }
        if (!real) {
          for (const [decision, n] of Object.entries(answer.counts)) {
            dryRun[decision] = (dryRun[decision] ?? 0) + n;
          }
        }
      }
    }
    // Every message delivered before the seek must be delivered (and acked) again.
    const deadline = Date.now() + 45_000;
    let again = delivered(seekAt);
    while ([...before].some((key) => !again.has(key)) && Date.now() < deadline) {
      await sleep(250);
      again = delivered(seekAt);
    }
    await sleep(1_000);
    const runsChanged: string[] = [];
    for (const runId of runIds) {
      if ((await stack.backends.store.get(runId))?.version !== versions.get(runId))
        runsChanged.push(runId);
    }
    const after = snapshotFiles(this.dataDir);
    const missing: Record<string, number> = {};
    for (const key of before) {
      if (again.has(key)) continue;
      const subscription = key.slice(0, key.indexOf('|'));
      missing[subscription] = (missing[subscription] ?? 0) + 1;
    }
    this.replay = {
      runs: runIds.length,
      dryRun,
      missing,
      expected: before.size,
      redelivered: [...before].filter((key) => again.has(key)).length,
      runsChanged,
      artifactsAdded: [...after.keys()].filter((path) => !files.has(path)),
      artifactsChanged: [...after]
        .filter(([path, sig]) => files.has(path) && files.get(path) !== sig)
        .map(([path]) => path),
    };
    return this.replay;
  }

  /**
   * Reads back the primary artifact of every SUCCEEDED step and compares it with the sha256 its
   * finalize recorded: a recovery finalizes from the artifact that is there, and nothing
   * overwrote it.
   */
  async verifyArtifacts(): Promise<void> {
    const { artifacts } = this.requireStack().backends;
    const problems: string[] = [];
    let checked = 0;
    for (const run of this.driven) {
      for (const [stepId, step] of Object.entries(run.final?.steps ?? {})) {
        if (step.status !== 'SUCCEEDED') continue;
        checked += 1;
        const uri = step.outputs.gcs_uri;
        const recorded = step.outputs.execution?.artifact?.sha256;
        const label = `run ${run.plan.index} ${stepId}`;
        if (uri === undefined || recorded === undefined) {
          problems.push(`${label} records no artifact`);
          continue;
        }
        const data = await artifacts.read(uri).catch(() => undefined);
        if (data === undefined) problems.push(`${label}: ${uri} is missing`);
        else if (sha256Hex(data) !== recorded)
          problems.push(`${label}: ${uri} differs from its sha256`);
      }
    }
    this.artifactCheck = { checked, problems };
  }

  observations(): ChaosObservations {
    const logs = this.allLogs();
    const dispatches: Dispatch[] = logs
      .filter((r) => r['event'] === 'step_dispatched')
      .map((r) => ({
        runId: String(r['runId']),
        stepId: String(r['stepId']),
        reason: String(r['reason']),
        at: Date.parse(String(r['time'])),
      }));
    const claims: Claim[] = logs
      .filter((r) => r['event'] === 'step_claimed')
      .map((r) => ({
        runId: String(r['runId']),
        stepId: String(r['stepId']),
        attempt: Number(r['attempt']),
        pid: typeof r['pid'] === 'number' ? r['pid'] : process.pid,
      }));
    return {
      plan: this.chaos.plan,
      durationMs: (this.finishedAt || Date.now()) - this.startedAt,
      runs: this.driven,
      executions: [...this.executions, ...this.childExecutions()],
      modelCalls: this.model?.calls ?? [],
      injected: this.chaos.injected,
      conflicts: this.chaos.conflicts,
      rogueWrites: this.rogueWriters.reduce((n, w) => n + w.writes, 0),
      dispatches,
      claims,
      ...(this.replay === undefined ? {} : { replay: this.replay }),
      ...(this.artifactCheck === undefined ? {} : { artifacts: this.artifactCheck }),
      events: Object.fromEntries(
        NOTABLE_EVENTS.map((event) => [event, logs.filter((r) => r['event'] === event).length]),
      ),
    };
  }

  async close(): Promise<void> {
    for (const writer of this.rogueWriters) await writer.stop().catch(() => undefined);
    for (const worker of this.workerProcesses) await worker.stop(5_000).catch(() => undefined);
    for (const broker of this.brokers) await broker.close();
    await this.stack?.close();
    await this.model?.close();
    rmSync(this.workDir, { recursive: true, force: true });
  }

  // -- one run --------------------------------------------------------------------------------

  private async driveRun(plan: RunPlan): Promise<DrivenRun> {
    const driven: DrivenRun = { plan, settled: false };
    const started = Date.now();
    let writer: RogueWriter | undefined;
    const sideTasks: Promise<void>[] = [];
    try {
      const runId = await this.trigger(plan);
      driven.runId = runId;
      if (plan.writer?.mode === 'touch') {
        writer = new RogueWriter(
          this.requireStack().backends.store,
          runId,
          plan.writer.intervalMs,
          this.chaos.random(`writer:${plan.index}`),
        );
        this.rogueWriters.push(writer);
      }
      if (plan.writer?.mode === 'cancel')
        sideTasks.push(this.cancelWhenHeld(runId, plan.writer.timeframe));
      if (plan.kill !== undefined) sideTasks.push(this.killWhenHeld(runId, plan));
      const side = Promise.all(sideTasks);
      // A side task that fails (e.g. the kill found no lease) ends the wait at once.
      const final = await Promise.race([
        this.settle(runId),
        side.then(() => new Promise<never>(() => undefined)),
      ]);
      await side;
      driven.final = final.run;
      driven.settled = final.settled;
      if (!final.settled) driven.error = `not settled within ${CHAOS_TIMINGS.settleTimeoutMs} ms`;
    } catch (error) {
      driven.error = error instanceof Error ? error.message : String(error);
      if (driven.runId !== undefined) {
        driven.final = (await this.requireStack().backends.store.get(driven.runId))?.run;
      }
    } finally {
      await writer?.stop().catch(() => undefined);
      if (plan.writer?.mode === 'cancel' && driven.runId !== undefined) {
        this.model?.release(driven.runId, plan.writer.timeframe);
      }
      driven.durationMs = Date.now() - started;
    }
    return driven;
  }

  private async trigger(plan: RunPlan): Promise<string> {
    const stack = this.requireStack();
    const response = await fetch(`${stack.url}/runs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.token}`,
        'content-type': 'application/json',
        'x-tda-owner': plan.ownerId,
      },
      body: JSON.stringify({ flowKey: CHAOS_FLOW_KEY, scope: { symbol: SYMBOL } }),
    });
    const body = (await response.json()) as { runId?: unknown; code?: unknown; message?: unknown };
    if (response.status !== 201 || typeof body.runId !== 'string') {
      throw new Error(
        `trigger answered ${response.status} ${String(body.code)}: ${String(body.message)}`,
      );
    }
    return body.runId;
  }

  /** Waits until the run and every one of its steps are terminal (or the time limit). */
  private async settle(runId: string): Promise<{ run: FlowRun | undefined; settled: boolean }> {
    const store = this.requireStack().backends.store;
    const deadline = Date.now() + CHAOS_TIMINGS.settleTimeoutMs;
    let run: FlowRun | undefined;
    while (Date.now() < deadline) {
      run = (await store.get(runId))?.run;
      if (
        run !== undefined &&
        TERMINAL_RUN.has(run.status) &&
        Object.values(run.steps).every((s) => !ACTIVE_STEP.has(s.status))
      ) {
        return { run, settled: true };
      }
      await sleep(200);
    }
    return { run, settled: false };
  }

  /**
   * worker_killed: the worker process is caught inside the planned report step — its model call
   * held by the scripted endpoint (`model_call`), or its finalize write held after the report
   * artifact was written (`before_finalize`) — while the run document shows the step RUNNING
   * under that process's lease, and gets SIGKILL. A fresh process starts; the reconciler must
   * reclaim the step once the lease expires, and the fresh worker finish it (from the artifact,
   * in the second case).
   */
  private async killWhenHeld(runId: string, plan: RunPlan): Promise<void> {
    const { kill } = plan;
    if (kill === undefined) return;
    const stepId = REPORT_STEP[kill.timeframe];
    let artifactUri: string | undefined;
    if (kill.moment === 'model_call') {
      await withTimeout(
        this.requireModel().waitForCall(
          (c) => c.runId === runId && c.timeframe === kill.timeframe && c.behaviour === 'hold',
        ),
        45_000,
        `the ${kill.timeframe} model call of ${runId}`,
      );
    } else {
      const held = await withTimeout(
        this.waitForExecutionRecord(
          (r) => r.runId === runId && r.stepId === stepId && r.phase === 'finalize_held',
        ),
        45_000,
        `the held finalize of ${stepId} in ${runId}`,
      );
      artifactUri = held.uri;
      if (
        artifactUri === undefined ||
        !(await this.requireStack().backends.artifacts.exists(artifactUri))
      ) {
        throw new Error(
          `the finalize of ${stepId} was held, but its artifact ${artifactUri ?? '?'} is missing`,
        );
      }
    }
    const victim = this.llm;
    if (victim === undefined) throw new Error('no LLM worker process to kill');
    const step = (await this.requireStack().backends.store.get(runId))?.run.steps[stepId];
    const owner = step?.lease?.owner ?? '';
    if (
      step?.status !== 'RUNNING' ||
      !owner.includes(`/${victim.pid}/`) ||
      Date.parse(step.lease?.expiresAt ?? '') <= Date.now()
    ) {
      throw new Error(
        `${stepId} is ${step?.status ?? 'missing'} with lease ${JSON.stringify(step?.lease)}, not held by process ${victim.pid}`,
      );
    }
    await victim.kill();
    this.killedOwners.add(plan.ownerId);
    this.chaos.record({
      kind: 'worker_killed',
      runId,
      stepId,
      action: 'killed',
      detail: {
        pid: victim.pid,
        moment: kill.moment,
        attempt: step.attempt,
        leaseOwner: owner,
        ...(artifactUri === undefined ? {} : { artifactUri }),
      },
    });
    this.llm = await this.startLlmWorker();
    this.requireModel().release(runId, kill.timeframe);
  }

  private async waitForExecutionRecord(
    match: (record: ExecutionRecord) => boolean,
  ): Promise<ExecutionRecord> {
    for (;;) {
      const found = this.childExecutions().find(match);
      if (found !== undefined) return found;
      await sleep(100);
    }
  }

  /** conflicting_writer (cancel): the run is cancelled while its report step is running. */
  private async cancelWhenHeld(runId: string, timeframe: Timeframe): Promise<void> {
    await withTimeout(
      this.requireModel().waitForCall(
        (c) => c.runId === runId && c.timeframe === timeframe && c.behaviour === 'hold',
      ),
      45_000,
      `the ${timeframe} model call of ${runId}`,
    );
    // The run is its plan's owner's: the operator (an admin) acts for that owner.
    const owner = (await this.requireStack().backends.store.get(runId))?.run.ownerId;
    const cancelled = await this.api(owner).cancel(runId);
    if (cancelled.status !== 'CANCELLED') {
      throw new Error(`cancel of ${runId} left it ${cancelled.status}`);
    }
    this.chaos.record({
      kind: 'conflicting_writer',
      runId,
      stepId: REPORT_STEP[timeframe],
      action: 'cancelled',
    });
  }

  // -- processes and logs ---------------------------------------------------------------------

  private async startLlmWorker(): Promise<WorkerProcess> {
    const { llm } = CHAOS_TIMINGS;
    const stack = this.requireStack();
    const worker = await WorkerProcess.start({
      root: this.options.root,
      main: LLM_WORKER_MAIN,
      env: {
        ...this.options.baseEnv,
        TDA_BACKEND: 'emulators',
        FIRESTORE_EMULATOR_HOST: this.options.emulators.firestoreHost,
        PUBSUB_EMULATOR_HOST: this.options.emulators.pubsubHost,
        GOOGLE_CLOUD_PROJECT: this.projectId,
        TDA_PUBSUB_PREFIX: this.prefix,
        TDA_DATA_DIR: stack.dataDir,
        PORT: '0',
        // debug: the replay check needs every delivery's message_acked (a processed one is debug)
        TDA_LOG_LEVEL: 'debug',
        GEMINI_API_KEY: 'chaos-suite-fake-key',
        TDA_GEMINI_BASE_URL: this.requireModel().baseUrl,
        TDA_CHAOS_EXECUTIONS_FILE: this.executionsFile,
        TDA_CHAOS_LEASE_MS: String(llm.leaseMs),
        TDA_CHAOS_HEARTBEAT_MS: String(llm.heartbeatMs),
        TDA_CHAOS_STEP_TIMEOUT_MS: String(llm.stepTimeoutMs),
        TDA_CHAOS_RETRY_BASE_DELAY_MS: String(llm.retryBaseDelayMs),
        TDA_CHAOS_REQUEST_DEADLINE_MS: String(llm.requestDeadlineMs),
        TDA_CHAOS_FINALIZE_BUDGET_MS: String(llm.finalizeBudgetMs),
        TDA_CHAOS_MIN_REPAIR_WINDOW_MS: String(llm.minRepairWindowMs),
        TDA_CHAOS_HOLD_FINALIZE: JSON.stringify(
          this.plan
            .filter(
              (r) => r.kill?.moment === 'before_finalize' && !this.killedOwners.has(r.ownerId),
            )
            .map((r) => ({ ownerId: r.ownerId, stepId: REPORT_STEP[r.kill?.timeframe ?? '1M'] })),
        ),
      },
    });
    this.workerProcesses.push(worker);
    return worker;
  }

  private childExecutions(): ExecutionRecord[] {
    if (!existsSync(this.executionsFile)) return [];
    return readFileSync(this.executionsFile, 'utf8')
      .split('\n')
      .flatMap((line) => {
        // The last line may still be being written by a live process.
        try {
          return line.trim() === '' ? [] : [JSON.parse(line) as ExecutionRecord];
        } catch {
          return [];
        }
      });
  }

  private logger(service: string): MemoryLogger {
    let logger = this.loggers.get(service);
    if (logger === undefined) {
      // debug: the replay check needs every delivery's message_acked (a processed one is debug)
      logger = createMemoryLogger({ service, level: 'debug' });
      this.loggers.set(service, logger);
    }
    return logger;
  }

  allLogs(): LogRecord[] {
    return [
      ...[...this.loggers.values()].flatMap((l) => l.records as LogRecord[]),
      ...this.workerProcesses.flatMap((w) => w.logs),
    ];
  }

  private requireStack(): LocalStack {
    if (this.stack === undefined) throw new Error('the chaos suite has not started');
    return this.stack;
  }

  /**
   * The stack's API as the operator, acting for `owner` when given (each run belongs to its
   * plan's owner: the trigger stays a raw request that sets the plan's X-TDA-Owner header).
   */
  private api(owner?: string): ApiClient {
    const stack = this.requireStack();
    return new ApiClient({
      baseUrl: stack.url,
      token: stack.token,
      ...(owner === undefined ? {} : { actingOwner: owner }),
    });
  }

  private requireModel(): ChaosModelServer {
    if (this.model === undefined) throw new Error('the chaos suite has not started');
    return this.model;
  }
}
