import type { FlowRun, FlowStep } from '@tda/contracts';
import type { InjectedFault } from './chaos-controller';
import type { ModelCall } from './chaos-model.server';
import {
  FAULT_KINDS,
  FLOW1_STEP_IDS,
  REPORT_STEP,
  type ChaosPlan,
  type FaultKind,
  type RunPlan,
  type Timeframe,
} from './chaos-plan';
import type { ChaosReport, CheckRow, FaultRow } from './chaos-report';
import type { ExecutionRecord } from './counting-handler';

/** What one driven run left behind. */
export interface DrivenRun {
  plan: RunPlan;
  runId?: string;
  /** The run document once it and all its steps were terminal (or the last one read). */
  final?: FlowRun;
  /** Run and steps terminal within the time limit. */
  settled: boolean;
  /** Why driving it failed (trigger refused, a kill precondition not met, ...). */
  error?: string;
  /** From the trigger until the run and its steps were terminal. */
  durationMs?: number;
}

/** A step-ready publish of the orchestrator (its step_dispatched log line). */
export interface Dispatch {
  runId: string;
  stepId: string;
  reason: string;
  at: number;
}

/** A claim of a worker (its step_claimed log line), from any process. */
export interface Claim {
  runId: string;
  stepId: string;
  attempt: number;
  pid: number;
}

export interface ReplayObservation {
  /** Runs whose messages were replayed (all runs driven before the seek). */
  runs: number;
  /** What the dry runs of POST /admin/replay predicted, summed over the subscriptions. */
  dryRun: Record<string, number>;
  /** Messages (per subscription and message id) delivered before the seek. */
  expected: number;
  /** Of those, delivered again after the seek. */
  redelivered: number;
  /** Messages not delivered again, per subscription (diagnosis). */
  missing: Record<string, number>;
  /** Run documents whose version changed while the replay was processed. */
  runsChanged: string[];
  /** Artifact files added or rewritten while the replay was processed. */
  artifactsAdded: string[];
  artifactsChanged: string[];
}

export interface ChaosObservations {
  plan: ChaosPlan;
  durationMs: number;
  runs: DrivenRun[];
  executions: ExecutionRecord[];
  modelCalls: ModelCall[];
  injected: InjectedFault[];
  /** Version conflicts the services' writes hit, per run. */
  conflicts: ReadonlyMap<string, number>;
  rogueWrites: number;
  dispatches: Dispatch[];
  claims: Claim[];
  replay?: ReplayObservation;
  /**
   * SUCCEEDED steps whose primary artifact is missing or differs from the sha256 the finalize
   * recorded (read back from storage by the suite), and how many were checked.
   */
  artifacts?: { checked: number; problems: string[] };
  /** How often notable events were logged (nacks, conflicts, no-ops...), for the report. */
  events?: Record<string, number>;
}

const TERMINAL_STEP = new Set(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED']);
const TERMINAL_RUN = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/** Timeframes of a run's report steps that a fault deliberately leaves unanswered. */
function abandonedAllowed(plan: RunPlan): Set<Timeframe> {
  const allowed = new Set<Timeframe>();
  if (plan.hang !== undefined) allowed.add(plan.hang.timeframe);
  if (plan.kill?.moment === 'model_call') allowed.add(plan.kill.timeframe);
  if (plan.writer?.mode === 'cancel') allowed.add(plan.writer.timeframe);
  return allowed;
}

function stepOf(run: FlowRun | undefined, stepId: string): FlowStep | undefined {
  return run?.steps[stepId];
}

function count<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  return items.reduce((n, item) => (predicate(item) ? n + 1 : n), 0);
}

function check(
  check: string,
  required: string,
  problems: readonly string[],
  observed: string,
): CheckRow {
  return {
    check,
    required,
    observed: problems.length === 0 ? observed : `${observed}; ${problems.slice(0, 3).join('; ')}`,
    ok: problems.length === 0,
  };
}

/**
 * Judges one chaos suite run: every required property (terminal runs, no lost steps, one
 * execution per step attempt, one model call per LLM step plus at most one repair, the expected
 * outcome per fault, no side effect of a replay) becomes a row with what was observed; any
 * violation is named in the row and marks it failed. Pure, so the judgement itself is unit-tested.
 */
export function evaluateChaos(obs: ChaosObservations): ChaosReport {
  const runs = obs.runs;
  const byRun = new Map(
    runs.flatMap((r) => (r.runId === undefined ? [] : [[r.runId, r] as const])),
  );
  const checks: CheckRow[] = [];

  // Runs driven and terminal.
  const driveProblems = runs.flatMap((r) =>
    r.error === undefined ? [] : [`run ${r.plan.index}: ${r.error}`],
  );
  checks.push(
    check(
      'runs driven',
      `${obs.plan.runs.length}`,
      driveProblems,
      `${count(runs, (r) => r.runId !== undefined)}`,
    ),
  );
  const terminal = count(runs, (r) => r.final !== undefined && TERMINAL_RUN.has(r.final.status));
  checks.push(
    check(
      'runs terminal',
      '100 %',
      runs
        .filter((r) => r.final === undefined || !TERMINAL_RUN.has(r.final.status))
        .map((r) => `run ${r.plan.index} ${r.runId ?? '?'} is ${r.final?.status ?? 'unknown'}`),
      `${terminal}/${runs.length} (${runs.length === 0 ? 0 : Math.round((terminal / runs.length) * 100)} %)`,
    ),
  );

  // Outcomes as planned.
  const outcomeProblems = runs
    .filter((r) => r.final !== undefined && r.final.status !== r.plan.expected)
    .map((r) => {
      const errors = Object.entries(r.final?.steps ?? {})
        .filter(([, s]) => s.error !== undefined)
        .map(([id, s]) => `${id} ${s.error?.code ?? ''}`);
      return `run ${r.plan.index} [${r.plan.faults.join('+')}] ${r.final?.status ?? '?'} (expected ${r.plan.expected}; ${errors.join(', ')})`;
    });
  const expectedCounts = ['SUCCEEDED', 'FAILED', 'CANCELLED']
    .map((s) => `${count(runs, (r) => r.plan.expected === s)} ${s}`)
    .join(', ');
  checks.push(
    check(
      'outcome as planned',
      expectedCounts,
      outcomeProblems,
      `${runs.length - outcomeProblems.length}/${runs.length}`,
    ),
  );

  // Lost steps: in a terminal run every step is terminal; all six flow-1 steps exist.
  const lost: string[] = [];
  for (const r of runs) {
    if (r.final === undefined) continue;
    for (const stepId of FLOW1_STEP_IDS) {
      const step = stepOf(r.final, stepId);
      if (step === undefined) lost.push(`run ${r.plan.index} has no ${stepId}`);
      else if (!TERMINAL_STEP.has(step.status))
        lost.push(`run ${r.plan.index} ${stepId} ${step.status}`);
      else if (step.lease !== undefined) lost.push(`run ${r.plan.index} ${stepId} keeps a lease`);
    }
    if (r.final.status === 'SUCCEEDED') {
      for (const [stepId, step] of Object.entries(r.final.steps)) {
        if (step.status !== 'SUCCEEDED')
          lost.push(`run ${r.plan.index} SUCCEEDED with ${stepId} ${step.status}`);
      }
    }
  }
  checks.push(check('lost steps', '0', lost, `${lost.length}`));
  if (obs.artifacts !== undefined) {
    checks.push(
      check(
        'artifacts of SUCCEEDED steps',
        'present, sha256 as finalized',
        obs.artifacts.problems,
        `${obs.artifacts.checked - obs.artifacts.problems.length}/${obs.artifacts.checked}`,
      ),
    );
  }

  // Executions: per (run, step, attempt) at most one completed execution; every SUCCEEDED step
  // completed exactly once overall (a recovery finalizes from the artifact, never re-executes).
  const perAttempt = new Map<string, { starts: number; completed: number }>();
  for (const e of obs.executions) {
    if (e.phase !== 'start' && e.phase !== 'completed') continue;
    const key = `${e.runId}|${e.stepId}|${e.attempt}`;
    const entry = perAttempt.get(key) ?? { starts: 0, completed: 0 };
    if (e.phase === 'start') entry.starts += 1;
    else entry.completed += 1;
    perAttempt.set(key, entry);
  }
  const execProblems: string[] = [];
  let maxCompleted = 0;
  let retriedAttempts = 0;
  for (const [key, entry] of perAttempt) {
    maxCompleted = Math.max(maxCompleted, entry.completed);
    if (entry.starts > 1) retriedAttempts += 1;
    if (entry.completed > 1) execProblems.push(`${key} executed ${entry.completed} times`);
    const [runId = ''] = key.split('|');
    const plan = byRun.get(runId)?.plan;
    // More than one try inside an attempt only after a retryable error, i.e. a hung model call.
    if (entry.starts > 1 && plan?.hang === undefined)
      execProblems.push(`${key} tried ${entry.starts} times without a planned hang`);
  }
  for (const r of runs) {
    if (r.final === undefined || r.runId === undefined) continue;
    for (const [stepId, step] of Object.entries(r.final.steps)) {
      const completed = count(
        obs.executions,
        (e) => e.runId === r.runId && e.stepId === stepId && e.phase === 'completed',
      );
      if (step.status === 'SUCCEEDED' && completed !== 1) {
        execProblems.push(`run ${r.plan.index} ${stepId} completed ${completed} executions`);
      }
      if (step.status !== 'SUCCEEDED' && completed > 1) {
        execProblems.push(
          `run ${r.plan.index} ${stepId} (${step.status}) completed ${completed} executions`,
        );
      }
      const killed = r.plan.kill !== undefined && REPORT_STEP[r.plan.kill.timeframe] === stepId;
      if (step.status === 'SUCCEEDED' && step.attempt !== (killed ? 2 : 1)) {
        execProblems.push(
          `run ${r.plan.index} ${stepId} finished at attempt ${step.attempt}, expected ${killed ? 2 : 1}`,
        );
      }
    }
  }
  checks.push(
    check(
      'executions per step attempt',
      '1',
      execProblems,
      `max ${maxCompleted} over ${perAttempt.size} attempts (${retriedAttempts} with in-process retries after a hung model call)`,
    ),
  );

  // Model calls per LLM step: one answered call, plus the repair call where the first answer
  // was malformed; unanswered calls only where a fault holds or hangs the call.
  const modelProblems: string[] = [];
  const answeredPerStep = new Map<number, number>();
  let repairs = 0;
  let abandoned = 0;
  for (const r of runs) {
    if (r.runId === undefined) continue;
    const allowed = abandonedAllowed(r.plan);
    for (const timeframe of ['1M', '1w'] as const) {
      const calls = obs.modelCalls.filter((c) => c.runId === r.runId && c.timeframe === timeframe);
      const step = stepOf(r.final, REPORT_STEP[timeframe]);
      if (calls.length === 0) continue;
      const answered = count(calls, (c) => c.answered && !c.repair);
      const repairCalls = count(calls, (c) => c.repair);
      const unanswered = count(calls, (c) => !c.answered);
      answeredPerStep.set(answered, (answeredPerStep.get(answered) ?? 0) + 1);
      repairs += repairCalls;
      abandoned += unanswered;
      const label = `run ${r.plan.index} ${timeframe}`;
      const wantRepair = r.plan.badOutput?.timeframe === timeframe ? 1 : 0;
      if (step?.status === 'SUCCEEDED' && (answered !== 1 || repairCalls !== wantRepair)) {
        modelProblems.push(
          `${label}: ${answered} answered + ${repairCalls} repair calls (expected 1 + ${wantRepair})`,
        );
      }
      if (answered > 1 || repairCalls > 1)
        modelProblems.push(`${label}: ${answered} answered, ${repairCalls} repairs`);
      if (unanswered > 0 && !allowed.has(timeframe)) {
        modelProblems.push(
          `${label}: ${unanswered} unanswered calls without a planned hang/kill/cancel`,
        );
      }
      // A model that never answers costs at most 3 tries in each of the harness's 3 tries.
      if (
        r.plan.hang?.timeframe === timeframe &&
        r.plan.hang.mode === 'persistent' &&
        calls.length > 9
      ) {
        modelProblems.push(`${label}: ${calls.length} calls to a hung model (retries unbounded?)`);
      }
      if (
        r.plan.hang?.timeframe === timeframe &&
        r.plan.hang.mode === 'transient' &&
        unanswered !== 1
      ) {
        modelProblems.push(
          `${label}: transient hang left ${unanswered} unanswered calls (expected 1)`,
        );
      }
    }
  }
  checks.push(
    check(
      'model calls per LLM step',
      '1 (+ at most 1 repair)',
      modelProblems,
      `${[...answeredPerStep]
        .sort(([a], [b]) => b - a)
        .map(([n, steps]) => `${n} answered call${n === 1 ? '' : 's'} on ${steps} steps`)
        .join(', ')}; ${repairs} repair calls; ${abandoned} calls hung or held by faults`,
    ),
  );

  // Fault-specific recoveries.
  const faultRows: FaultRow[] = [];
  const recoveryProblems: string[] = [];
  for (const kind of FAULT_KINDS) {
    const planned = runs.filter((r) => r.plan.faults.includes(kind));
    const injected = obs.injected.filter((f) => f.kind === kind);
    const outcomes = ['SUCCEEDED', 'FAILED', 'CANCELLED']
      .map((s) => [s, count(planned, (r) => r.final?.status === s)] as const)
      .filter(([, n]) => n > 0)
      .map(([s, n]) => `${s} ${n}/${planned.length}`);
    faultRows.push({
      kind,
      runs: planned.length,
      injected: describeInjected(kind, injected, obs),
      outcome: outcomes.join(', ') || '-',
    });
    if (planned.length > 0 && injected.length === 0)
      recoveryProblems.push(`${kind}: planned but never injected`);
  }
  recoveryProblems.push(...faultRecoveryProblems(obs, byRun));
  checks.push(
    check(
      'each fault injected and recovered as designed',
      'all',
      recoveryProblems,
      `${faultRows.filter((f) => f.runs > 0).length} fault kinds`,
    ),
  );

  // Replay.
  const replay = obs.replay;
  if (replay !== undefined) {
    const replayProblems = [
      ...replay.runsChanged.map((id) => `run ${id} changed`),
      ...replay.artifactsAdded.map((p) => `artifact added ${p}`),
      ...replay.artifactsChanged.map((p) => `artifact rewritten ${p}`),
      ...Object.entries(replay.dryRun)
        .filter(([decision, n]) => decision !== 'noop' && n > 0)
        .map(([decision, n]) => `the dry run predicted ${n} × ${decision}`),
      ...((replay.dryRun['noop'] ?? 0) === 0 ? ['the dry run listed nothing to replay'] : []),
      ...(replay.redelivered < replay.expected
        ? [
            `only ${replay.redelivered}/${replay.expected} messages redelivered (missing: ${JSON.stringify(replay.missing)})`,
          ]
        : []),
    ];
    checks.push(
      check(
        'side effects caused by replay',
        '0',
        replayProblems,
        `${replay.runsChanged.length + replay.artifactsAdded.length + replay.artifactsChanged.length} (POST /admin/replay to before the first run: dry run ${replay.dryRun['noop'] ?? 0} × noop; ${replay.redelivered}/${replay.expected} messages of ${replay.runs} runs redelivered)`,
      ),
    );
  }
  return {
    seed: obs.plan.seed,
    durationMs: obs.durationMs,
    faults: faultRows,
    checks,
    events: obs.events ?? {},
    runs: runs.map((r) => ({
      index: r.plan.index,
      faults: describePlan(r.plan),
      expected: r.plan.expected,
      status: r.final?.status ?? (r.error === undefined ? '?' : 'error'),
      seconds: r.durationMs === undefined ? '-' : (r.durationMs / 1000).toFixed(1),
    })),
  };
}

/** e.g. "model_hang(1w, transient) + orchestrator_crash(charts:1M:ctpl_default_v1)". */
export function describePlan(plan: RunPlan): string {
  return plan.faults
    .map((fault) => {
      switch (fault) {
        case 'worker_killed':
          return `${fault}(${plan.kill?.timeframe ?? '?'}, ${plan.kill?.moment ?? '?'})`;
        case 'duplicate_reorder':
          return `${fault}(x${plan.duplicates?.copies ?? '?'}, <${plan.duplicates?.maxDelayMs ?? '?'} ms)`;
        case 'orchestrator_crash':
          return `${fault}(${plan.crash?.stepId ?? '?'})`;
        case 'conflicting_writer':
          return plan.writer?.mode === 'cancel'
            ? `${fault}(cancel at ${plan.writer.timeframe})`
            : `${fault}(every ~${plan.writer?.intervalMs ?? '?'} ms)`;
        case 'finalize_write_failed':
          return `${fault}(${plan.finalizeFailure?.stepId ?? '?'})`;
        case 'model_hang':
          return `${fault}(${plan.hang?.timeframe ?? '?'}, ${plan.hang?.mode ?? '?'})`;
        case 'model_bad_output':
          return `${fault}(${plan.badOutput?.timeframe ?? '?'})`;
      }
    })
    .join(' + ');
}

function describeInjected(
  kind: FaultKind,
  injected: readonly InjectedFault[],
  obs: ChaosObservations,
): string {
  const by = (action: string): number => count(injected, (f) => f.action === action);
  switch (kind) {
    case 'worker_killed':
      return `${by('killed')} SIGKILLs while holding a lease (${count(
        injected,
        (f) => f.action === 'killed' && f.detail?.['moment'] === 'before_finalize',
      )} after the artifact write)`;
    case 'duplicate_reorder':
      return `${by('duplicate')} extra copies, ${by('delayed')} originals held back`;
    case 'orchestrator_crash':
      return `${by('publish_lost')} step-ready publishes lost`;
    case 'conflicting_writer': {
      const conflicts = [...obs.conflicts.values()].reduce((a, b) => a + b, 0);
      return `${obs.rogueWrites} foreign writes, ${by('cancelled')} cancels; ${conflicts} version conflicts re-decided`;
    }
    case 'finalize_write_failed':
      return `${by('finalize_failed')} finalize writes failed after the artifact write`;
    case 'model_hang':
      return `${count(obs.modelCalls, (c) => c.behaviour === 'hang')} hung calls`;
    case 'model_bad_output':
      return `${count(obs.modelCalls, (c) => c.behaviour === 'invalid')} malformed answers`;
  }
}

/** What each fault must have led to, beyond the generic checks. */
function faultRecoveryProblems(
  obs: ChaosObservations,
  byRun: ReadonlyMap<string, DrivenRun>,
): string[] {
  const problems: string[] = [];
  for (const fault of obs.injected) {
    const run = byRun.get(fault.runId);
    const label = `run ${run?.plan.index ?? '?'} ${fault.kind}`;
    const step = fault.stepId === undefined ? undefined : stepOf(run?.final, fault.stepId);
    switch (fault.action) {
      case 'publish_lost': {
        // Nothing redelivers the lost message: the reconciler's republish of a READY step that
        // stayed unclaimed is what must get it executed.
        const again = obs.dispatches.some(
          (d) =>
            d.runId === fault.runId &&
            d.stepId === fault.stepId &&
            d.at >= fault.at &&
            d.reason === 'reconcile',
        );
        if (!again) {
          problems.push(`${label}: ${fault.stepId ?? ''} was never republished by the reconciler`);
        }
        if (run?.plan.expected === 'SUCCEEDED' && step?.status !== 'SUCCEEDED') {
          problems.push(`${label}: ${fault.stepId ?? ''} ended ${step?.status ?? '?'}`);
        }
        break;
      }
      case 'finalize_failed': {
        if (fault.detail?.['artifactWritten'] !== true) {
          problems.push(`${label}: the failed finalize had no artifact behind it`);
        }
        if (
          step?.status !== 'SUCCEEDED' ||
          step.outputs.execution?.recoveredFromArtifact !== true
        ) {
          problems.push(
            `${label}: ${fault.stepId ?? ''} not finalized from its artifact (${step?.status ?? '?'})`,
          );
        }
        break;
      }
      case 'killed': {
        const pid = fault.detail?.['pid'];
        const finalClaim = obs.claims.find(
          (c) =>
            c.runId === fault.runId && c.stepId === fault.stepId && c.attempt === step?.attempt,
        );
        if (step?.status !== 'SUCCEEDED')
          problems.push(`${label}: ${fault.stepId ?? ''} ended ${step?.status ?? '?'}`);
        if (finalClaim === undefined || finalClaim.pid === pid) {
          problems.push(`${label}: the step was not reclaimed by a fresh worker process`);
        }
        // Killed after its artifact write: the reclaim must finalize from that artifact.
        if (
          fault.detail?.['moment'] === 'before_finalize' &&
          step?.outputs.execution?.recoveredFromArtifact !== true
        ) {
          problems.push(
            `${label}: ${fault.stepId ?? ''} was not finalized from the killed worker's artifact`,
          );
        }
        break;
      }
      case 'cancelled':
        if (step?.status !== 'CANCELLED') {
          problems.push(
            `${label}: the running ${fault.stepId ?? ''} ended ${step?.status ?? '?'}, not CANCELLED`,
          );
        }
        break;
      default:
        break;
    }
  }
  for (const run of obs.runs) {
    const hang = run.plan.hang;
    if (hang?.mode !== 'persistent') continue;
    const step = stepOf(run.final, REPORT_STEP[hang.timeframe]);
    const code = step?.error?.code;
    if (step?.status !== 'FAILED' || (code !== 'LLM_TIMEOUT' && code !== 'STEP_TIMEOUT')) {
      problems.push(
        `run ${run.plan.index} persistent hang: step ${step?.status ?? '?'} ${code ?? ''}`,
      );
    }
  }
  const touchRuns = obs.runs.filter((r) => r.plan.writer?.mode === 'touch');
  if (touchRuns.length > 0 && obs.rogueWrites === 0)
    problems.push('conflicting_writer: no foreign write landed');
  return problems;
}
