import { streamRandom, type ChaosPlan, type FaultKind, type RunPlan } from './chaos-plan';

/** One fault actually injected (a plan says what may happen; this says what did). */
export interface InjectedFault {
  kind: FaultKind;
  runId: string;
  stepId?: string;
  /** e.g. 'duplicate', 'delayed', 'dropped', 'finalize_failed', 'hang', 'killed'. */
  action: string;
  detail?: Record<string, unknown>;
  at: number;
}

/**
 * The shared state of one chaos suite: the plan, which runId belongs to which planned run (bound
 * when the orchestrator creates the run document: the trigger carries the plan's owner id), the
 * faults injected so far and a few counters the report needs. Every decorator consults it.
 */
export class ChaosController {
  readonly injected: InjectedFault[] = [];
  /** Version conflicts the real store raised, per run (what the conflicting writers caused). */
  readonly conflicts = new Map<string, number>();
  private readonly byOwner: Map<string, RunPlan>;
  private readonly byRun = new Map<string, RunPlan>();
  /** Plan indexes already bound (a plan's owner id binds its first run only). */
  private readonly bound = new Set<number>();
  private readonly counters = new Map<string, number>();

  constructor(readonly plan: ChaosPlan) {
    this.byOwner = new Map(plan.runs.map((run) => [run.ownerId, run]));
  }

  /** Called with every run document the orchestrator creates; runs of no plan are ignored. */
  bind(run: { runId: string; ownerId?: string | undefined }): void {
    const planned = run.ownerId === undefined ? undefined : this.byOwner.get(run.ownerId);
    if (planned === undefined || this.bound.has(planned.index)) return;
    this.byRun.set(run.runId, planned);
    this.bound.add(planned.index);
  }

  planFor(runId: string | undefined): RunPlan | undefined {
    return runId === undefined ? undefined : this.byRun.get(runId);
  }

  /** 0 on the first call for `key`, then 1, 2, ...: per-message decision streams and "once". */
  next(key: string): number {
    const n = this.counters.get(key) ?? 0;
    this.counters.set(key, n + 1);
    return n;
  }

  random(name: string): () => number {
    return streamRandom(this.plan.seed, name);
  }

  record(fault: Omit<InjectedFault, 'at'>): void {
    this.injected.push({ ...fault, at: Date.now() });
  }

  countConflict(runId: string): void {
    if (this.byRun.has(runId)) this.conflicts.set(runId, (this.conflicts.get(runId) ?? 0) + 1);
  }

  injectedFor(kind: FaultKind, action?: string): InjectedFault[] {
    return this.injected.filter(
      (f) => f.kind === kind && (action === undefined || f.action === action),
    );
  }
}
