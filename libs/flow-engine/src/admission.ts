import type { FlowRun } from '@tda/contracts';
import { advance, type AdvanceResult } from './advance';

/**
 * Queued runs (seed 003 quota, seed 004 `queued` state): a triggered run is stored PENDING and
 * starts (PENDING -> RUNNING through `advance`) only when it is admitted, i.e. fewer runs than
 * the limits are RUNNING. Everything here is pure: the orchestrator reads the RUNNING and
 * PENDING runs, asks these functions, and writes.
 */
export interface AdmissionLimits {
  /** RUNNING runs overall. */
  maxRunning: number;
  /** RUNNING runs of one owner. */
  maxRunningPerOwner: number;
}

/** What admission needs to know about a run: who owns it and when it was created. */
export interface AdmissionRun {
  runId: string;
  ownerId: string;
  createdAt: string;
}

/** Why a queued run is not admitted (yet). */
export type QueueWait =
  /** Every overall slot is taken. */
  | { kind: 'running_limit'; running: number; limit: number }
  /** Its owner's slots are taken; runs of other owners behind it may start first. */
  | { kind: 'owner_running_limit'; ownerId: string; running: number; limit: number };

export interface QueueEntry {
  runId: string;
  ownerId: string;
  /** 1-based position among all queued runs, in creation order. */
  position: number;
  queueLength: number;
  /** 1-based position among the queued runs of its owner. */
  ownerPosition: number;
  ownerQueueLength: number;
  /** A slot is free for it: it starts with the next admission pass. */
  admissible: boolean;
  /** Empty when admissible. */
  waitingFor: QueueWait[];
}

export interface AdmissionPlan {
  /** Runs to start, oldest first. */
  admit: AdmissionRun[];
  /** Every queued run in creation order (the admitted ones too, marked admissible). */
  queue: QueueEntry[];
  /** RUNNING runs after the admitted ones started. */
  running: number;
  runningByOwner: Readonly<Record<string, number>>;
}

/** Creation order: createdAt, then runId (the same order that decides idempotency duplicates). */
export function compareCreationOrder(a: AdmissionRun, b: AdmissionRun): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  if (a.runId === b.runId) return 0;
  return a.runId < b.runId ? -1 : 1;
}

/**
 * Which queued runs start now. Queued runs are taken in creation order; a run starts when
 * fewer than `maxRunning` runs run overall and fewer than `maxRunningPerOwner` runs of its owner
 * run. A run held back only by its owner's limit does not block the runs of other owners behind
 * it; once the overall limit is reached nothing behind starts (so an older run is never passed
 * by a younger one of an owner with room, except by the per-owner rule).
 *
 * Deterministic and independent of the order of the inputs: every orchestrator instance that
 * reads the same runs admits the same ones, which is what keeps concurrent passes from
 * overshooting (they pick the same runs, and starting a run is a conditional write).
 */
export function planAdmission(
  running: RunningCounts | readonly Pick<AdmissionRun, 'ownerId'>[],
  queued: readonly AdmissionRun[],
  limits: AdmissionLimits,
): AdmissionPlan {
  const counts = isRunningCounts(running) ? running : countRunning(running);
  const byOwner = new Map(counts.byOwner);
  let total = counts.total;
  const ordered = dedupe(queued).sort(compareCreationOrder);
  const ownerTotals = new Map<string, number>();
  for (const run of ordered) ownerTotals.set(run.ownerId, (ownerTotals.get(run.ownerId) ?? 0) + 1);
  const ownerSeen = new Map<string, number>();
  const admit: AdmissionRun[] = [];
  const queue: QueueEntry[] = ordered.map((run, index) => {
    const ownerPosition = (ownerSeen.get(run.ownerId) ?? 0) + 1;
    ownerSeen.set(run.ownerId, ownerPosition);
    const ownerRunning = byOwner.get(run.ownerId) ?? 0;
    const waitingFor: QueueWait[] = [];
    if (total >= limits.maxRunning) {
      waitingFor.push({ kind: 'running_limit', running: total, limit: limits.maxRunning });
    }
    if (ownerRunning >= limits.maxRunningPerOwner) {
      waitingFor.push({
        kind: 'owner_running_limit',
        ownerId: run.ownerId,
        running: ownerRunning,
        limit: limits.maxRunningPerOwner,
      });
    }
    const admissible = waitingFor.length === 0;
    if (admissible) {
      admit.push(run);
      total += 1;
      byOwner.set(run.ownerId, ownerRunning + 1);
    }
    return {
      runId: run.runId,
      ownerId: run.ownerId,
      position: index + 1,
      queueLength: ordered.length,
      ownerPosition,
      ownerQueueLength: ownerTotals.get(run.ownerId) ?? 0,
      admissible,
      waitingFor,
    };
  });
  return { admit, queue, running: total, runningByOwner: Object.fromEntries(byOwner) };
}

/**
 * How many runs are RUNNING: overall, and for the owners that matter (those of the queued runs;
 * an owner not in the map has none). What the orchestrator reads with count queries instead of
 * the running runs themselves.
 */
export interface RunningCounts {
  total: number;
  byOwner: ReadonlyMap<string, number>;
}

function isRunningCounts(value: unknown): value is RunningCounts {
  return typeof value === 'object' && value !== null && 'byOwner' in value;
}

/** The counts of a list of RUNNING runs. */
export function countRunning(running: readonly Pick<AdmissionRun, 'ownerId'>[]): RunningCounts {
  const byOwner = new Map<string, number>();
  for (const run of running) byOwner.set(run.ownerId, (byOwner.get(run.ownerId) ?? 0) + 1);
  return { total: running.length, byOwner };
}

/** One entry per runId (a run listed twice, e.g. across pages of a moving list, counts once). */
function dedupe(runs: readonly AdmissionRun[]): AdmissionRun[] {
  const seen = new Map<string, AdmissionRun>();
  for (const run of runs) if (!seen.has(run.runId)) seen.set(run.runId, run);
  return [...seen.values()];
}

export type ActiveQuotaDecision =
  { kind: 'allow' } | { kind: 'exceeded'; ownerId: string; active: number; limit: number };

/**
 * Seed 003 `max_active_jobs_per_user` (active = queued + running): a trigger is refused when its
 * owner already has `limit` PENDING or RUNNING runs, so the new run would be one too many.
 */
export function decideActiveQuota(
  ownerId: string,
  active: number,
  limit: number,
): ActiveQuotaDecision {
  return active >= limit ? { kind: 'exceeded', ownerId, active, limit } : { kind: 'allow' };
}

export type QueuedRunDecision =
  /** Still waiting: nothing to write. */
  | { kind: 'wait' }
  /** The run ends without starting (cancel requested, deadline passed, unusable graph). */
  | { kind: 'end'; advance: AdvanceResult }
  /** Not PENDING any more: it started or ended elsewhere. */
  | { kind: 'not_queued' };

/**
 * A queued run that must not wait for a slot: one whose advance would end it (a cancel request,
 * its deadline passed — the deadline counts from the trigger, queue time included — or a graph
 * that can never run). Anything else waits; starting is `advance` itself, once admitted.
 */
export function decideQueuedRun(run: FlowRun, now: Date): QueuedRunDecision {
  if (run.status !== 'PENDING') return { kind: 'not_queued' };
  const decision = advance(run, now);
  return decision.termination === undefined ? { kind: 'wait' } : { kind: 'end', advance: decision };
}

/** The admission view of a run document. */
export function admissionRun(run: FlowRun): AdmissionRun {
  return { runId: run.runId, ownerId: run.ownerId, createdAt: run.createdAt };
}

/** One line for humans: "queued (position 2 of 3): ..." (blocked-on, logs). */
export function describeQueueEntry(entry: Omit<QueueEntry, 'runId' | 'ownerId'>): string {
  const head = `queued (position ${entry.position} of ${entry.queueLength})`;
  if (entry.admissible) return `${head}: a slot is free, it starts with the next admission pass`;
  const waits = entry.waitingFor.map((wait) =>
    wait.kind === 'running_limit'
      ? `all ${wait.limit} run slots are taken (${wait.running} running)`
      : `owner ${wait.ownerId} has ${wait.running} of ${wait.limit} allowed runs running` +
        (entry.ownerQueueLength > 1
          ? ` (its queued run ${entry.ownerPosition} of ${entry.ownerQueueLength})`
          : ''),
  );
  return `${head}: ${waits.join('; ')}`;
}
