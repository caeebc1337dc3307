import type { ErrorCode, FlowRun } from '@tda/contracts';
import { advance } from '../advance';
import { requestCancel } from '../cancel';
import { decideClaim } from '../claim';
import { decideFinalize, type FinalizeOutcome } from '../finalize';
import { decideHeartbeat } from '../lease';
import { applyPatch, isEmptyPatch, type RunPatch } from '../patch';
import { reconcileRun } from '../reconcile';
import { isTerminalRunStatus, isTerminalStepStatus } from '../run-status';
import { T0 } from './run-fixtures';

/**
 * A deterministic, single-threaded model of the real system for property tests: one versioned
 * run document with conditional writes (Firestore's update-time precondition), an orchestrator
 * that advances on every step event, workers that claim / heartbeat / finalize, and a reconciler.
 * "Concurrency" is a queue of pending tasks executed in random order; tasks are duplicated at
 * random (Pub/Sub redelivery) and some carry a snapshot read earlier (a stale decision that its
 * conditional write must reject). Workers may crash (their finalize never happens) or stall and
 * wake up after the reconciler gave their step to someone else.
 */

export type StepOutcome = { status: 'SUCCEEDED' } | { status: 'FAILED'; code: ErrorCode };

export interface SimulationOptions {
  outcomes: Readonly<Record<string, StepOutcome>>;
  random: () => number;
  /** Probability that a task is delivered twice. */
  duplicateRate?: number;
  /** Probability that a worker dies after its claim (never finalizes). */
  crashRate?: number;
  /** Inject one cancel request at a random point. */
  cancel?: boolean;
  maxAttempts?: number;
  maxTicks?: number;
  /** Called after every successful (non-empty) write with the documents before and after. */
  onWrite?: (before: FlowRun, after: FlowRun, patch: RunPatch, writer: Writer) => void;
}

export interface SimulationResult {
  run: FlowRun;
  ticks: number;
  /** False when maxTicks was hit before the run and all its steps reached terminal states. */
  settled: boolean;
  writes: number;
  /** Conditional writes refused because the document changed since the read. */
  rejectedWrites: number;
  /** Steps returned to READY by the reconciler after a worker crash. */
  reclaims: number;
}

/** Who made a write: the orchestrator (advance, cancel, reconcile) or a worker. */
export type Writer = { kind: 'orchestrator' } | { kind: 'worker'; owner: string; stepId: string };

const ORCHESTRATOR: Writer = { kind: 'orchestrator' };

interface Snapshot {
  run: FlowRun;
  version: number;
}

type Task =
  | { kind: 'advance'; snapshot?: Snapshot }
  | { kind: 'deliver'; stepId: string }
  | { kind: 'work'; stepId: string; owner: string }
  | { kind: 'cancel' };

const LEASE_MS = 600_000;
/** A bounded number of re-read-and-re-decide attempts, then the task goes back (nack). */
const WRITE_ATTEMPTS = 3;

export function simulate(initial: FlowRun, options: SimulationOptions): SimulationResult {
  const random = options.random;
  const duplicateRate = options.duplicateRate ?? 0.15;
  const crashRate = options.crashRate ?? 0;
  const maxAttempts = options.maxAttempts ?? 3;
  const maxTicks = options.maxTicks ?? 5_000;
  let doc: Snapshot = { run: structuredClone(initial), version: 0 };
  let clockMs = T0.getTime();
  let ticks = 0;
  let writes = 0;
  let rejectedWrites = 0;
  let workers = 0;
  let reclaims = 0;
  const zombies: Task[] = [];
  // the orchestrator published step-ready messages for whatever it already made READY
  const queue: Task[] = [
    { kind: 'advance' },
    ...Object.keys(initial.steps)
      .filter((id) => initial.steps[id]?.status === 'READY')
      .map((stepId): Task => ({ kind: 'deliver', stepId })),
  ];
  if (options.cancel === true) queue.push({ kind: 'cancel' });

  const now = (): Date => new Date(clockMs);
  const read = (): Snapshot => ({ run: structuredClone(doc.run), version: doc.version });
  const write = (patch: RunPatch, expectedVersion: number, writer: Writer): boolean => {
    if (doc.version !== expectedVersion) {
      rejectedWrites++;
      return false;
    }
    if (isEmptyPatch(patch)) return true;
    const before = doc.run;
    const after = applyPatch(before, { ...patch, updatedAt: now().toISOString() });
    doc = { run: after, version: doc.version + 1 };
    writes++;
    options.onWrite?.(before, after, patch, writer);
    return true;
  };
  const chance = (p: number): boolean => random() < p;
  const push = (task: Task): void => {
    queue.push(task);
    if (chance(duplicateRate)) queue.push(task);
  };

  /** read -> decide -> conditional write, re-reading on a precondition failure. */
  const decideAndWrite = (
    writer: Writer,
    first: Snapshot,
    decide: (run: FlowRun) => { patch: RunPatch; after?: () => void } | undefined,
  ): 'written' | 'nothing' | 'conflict' => {
    let snapshot = first;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const decision = decide(snapshot.run);
      if (decision === undefined) return 'nothing';
      if (write(decision.patch, snapshot.version, writer)) {
        decision.after?.();
        return 'written';
      }
      snapshot = read();
    }
    return 'conflict';
  };

  const publishReady = (stepIds: readonly string[]): void => {
    for (const stepId of stepIds) push({ kind: 'deliver', stepId });
  };

  const runTask = (task: Task): void => {
    switch (task.kind) {
      case 'advance': {
        const outcome = decideAndWrite(ORCHESTRATOR, task.snapshot ?? read(), (run) => {
          const result = advance(run, now());
          if (isEmptyPatch(result.patch)) return undefined;
          return { patch: result.patch, after: () => publishReady(result.newlyReady) };
        });
        if (outcome === 'conflict') queue.push({ kind: 'advance' });
        return;
      }
      case 'cancel': {
        const outcome = decideAndWrite(ORCHESTRATOR, read(), (run) => {
          const decision = requestCancel(run, now());
          return decision.kind === 'cancel' ? { patch: decision.patch } : undefined;
        });
        if (outcome === 'conflict') queue.push(task);
        return;
      }
      case 'deliver': {
        const owner = `worker-${++workers}`;
        const writer: Writer = { kind: 'worker', owner, stepId: task.stepId };
        const outcome = decideAndWrite(writer, read(), (run) => {
          const decision = decideClaim(run, task.stepId, { now: now(), owner, leaseMs: LEASE_MS });
          if (decision.kind !== 'claim') return undefined;
          return {
            patch: decision.patch,
            after: () => {
              push({ kind: 'advance' }); // the claim's step event
              const work: Task = { kind: 'work', stepId: task.stepId, owner };
              if (!chance(crashRate)) push(work);
              // a stalled worker (long GC pause, partition) wakes up after its lease was
              // reclaimed and tries to finish anyway: its writes must be refused
              else if (chance(0.5)) zombies.push(work);
            },
          };
        });
        if (outcome === 'conflict') queue.push(task);
        return;
      }
      case 'work': {
        const writer: Writer = { kind: 'worker', owner: task.owner, stepId: task.stepId };
        const outcome = decideAndWrite(writer, read(), (run) => {
          const beat = decideHeartbeat(run, task.stepId, {
            now: now(),
            owner: task.owner,
            leaseMs: LEASE_MS,
          });
          if (beat.kind === 'lease_lost' || beat.kind === 'invalid') return undefined;
          const planned = options.outcomes[task.stepId] ?? { status: 'SUCCEEDED' };
          const result: FinalizeOutcome =
            beat.kind === 'cancel_requested'
              ? { status: 'CANCELLED' }
              : planned.status === 'SUCCEEDED'
                ? {
                    status: 'SUCCEEDED',
                    gcsUri: `gs://tda-test/runs/${run.runId}/${task.stepId}.json`,
                  }
                : {
                    status: 'FAILED',
                    error: { code: planned.code, message: 'simulated failure', retryable: false },
                  };
          const decision = decideFinalize(run, task.stepId, {
            now: now(),
            owner: task.owner,
            outcome: result,
          });
          if (decision.kind !== 'finalize') return undefined;
          return {
            patch: decision.patch,
            after: () => push({ kind: 'advance', snapshot: read() }),
          };
        });
        if (outcome === 'conflict') queue.push(task);
        return;
      }
    }
  };

  /**
   * The reconciler: runs when nothing else is pending. Time jumps past every lease, so crashed
   * workers' steps are reclaimed (or failed / cancelled) and READY steps are republished.
   */
  const reconcile = (): void => {
    clockMs += LEASE_MS + 1_000;
    let republish: string[] = [];
    const outcome = decideAndWrite(ORCHESTRATOR, read(), (run) => {
      const result = reconcileRun(run, { now: now(), maxAttempts, republishReadyAfterMs: 1_000 });
      republish = result.republish;
      return { patch: result.patch, after: () => (reclaims += result.reclaimed.length) };
    });
    if (outcome !== 'conflict') publishReady(republish);
    queue.push(...zombies.splice(0));
  };

  const settled = (): boolean =>
    isTerminalRunStatus(doc.run.status) &&
    Object.values(doc.run.steps).every((s) => isTerminalStepStatus(s.status));

  while (ticks < maxTicks) {
    ticks++;
    clockMs += 1_000;
    if (queue.length === 0) {
      if (settled()) break;
      reconcile();
      continue;
    }
    const index = Math.floor(random() * queue.length);
    const [task] = queue.splice(index, 1);
    if (task === undefined) continue;
    // A stale decision: the orchestrator read the run now but decides only later.
    if (task.kind === 'advance' && task.snapshot === undefined && chance(0.2)) {
      queue.push({ kind: 'advance', snapshot: read() });
      continue;
    }
    runTask(task);
  }
  return {
    run: doc.run,
    ticks,
    settled: settled() && queue.length === 0,
    writes,
    rejectedWrites,
    reclaims,
  };
}
