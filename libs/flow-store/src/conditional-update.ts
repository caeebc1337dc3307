import { setTimeout as delay } from 'node:timers/promises';
import type { FlowRun } from '@tda/contracts';
import { type RunPatch, isEmptyPatch } from '@tda/flow-engine';
import {
  ConflictRetriesExhaustedError,
  RunNotFoundError,
  VersionConflictError,
} from './flow-store.errors';
import type { FlowRunStore, VersionedRun } from './flow-run-store.port';
import type { KeyedMutex } from './keyed-mutex';

/** What a pure decision function returns for the run it was shown. */
export type UpdateDecision<R> =
  { kind: 'write'; patch: RunPatch; result: R } | { kind: 'noop'; reason: string; result: R };

export type UpdateOutcome<R> =
  | { kind: 'written'; result: R; run: FlowRun; version: string; attempts: number }
  | { kind: 'noop'; reason: string; result: R; attempts: number }
  | { kind: 'not_found' };

export interface UpdateWithRetryOptions {
  /** Read-decide-write rounds before giving up (default 8). */
  maxAttempts?: number;
  /** Backoff before the second round; doubles each round (default 20 ms). */
  baseDelayMs?: number;
  /** Upper bound of any single backoff (default 1000 ms). */
  maxDelayMs?: number;
  /** Uniform [0, 1); injectable for tests. */
  random?: () => number;
  /** Injectable for tests. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Writers of one run in this process take turns (keyed by runId) for the whole read → write:
   * two of them racing on one document can only conflict, so the second waits and reads what
   * the first wrote instead of losing a precondition and retrying (issue 16: a 32-way fan-out
   * lost ~4 races per step).
   */
  turns?: KeyedMutex;
  /**
   * The run as the caller last wrote or read it. The first round decides on it instead of
   * reading: a worker finalizing the step it claimed usually finds the run as its claim left it,
   * so the read was one round trip and one document read per step spent on nothing (issue 16).
   * That round is not counted as an attempt: when `known` is stale the write's precondition
   * fails, and a noop decided on it is not trusted; either way the rounds go on as usual, at once.
   */
  known?: VersionedRun;
}

export const UPDATE_RETRY_DEFAULTS = {
  maxAttempts: 8,
  baseDelayMs: 20,
  maxDelayMs: 1_000,
} as const;

/** The reason reported when `decide` asked for a write but its patch was empty. */
export const EMPTY_PATCH_REASON = 'empty_patch';

/**
 * "Full jitter" backoff after the `attempt`-th conflict (1-based): uniform in
 * [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))). Spreading retries over the whole window is
 * what lets writers that collided once stop colliding.
 */
export function backoffDelayMs(
  attempt: number,
  random: () => number,
  baseDelayMs: number = UPDATE_RETRY_DEFAULTS.baseDelayMs,
  maxDelayMs: number = UPDATE_RETRY_DEFAULTS.maxDelayMs,
): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(Math.min(Math.max(random(), 0), 1) * ceiling);
}

/**
 * Read → decide → conditional write, the only way TDA writes a run (DESIGN.md §3). On a version
 * conflict the run is read again and `decide` runs again on the new state: another writer
 * touching a different step is no reason to give up, and one that already did our work turns the
 * decision into a noop. Stops on the first successful write, on a noop (an empty patch counts as
 * one), when the run does not exist (`decide` is not called), or throws
 * ConflictRetriesExhaustedError after `maxAttempts` lost races. Other errors propagate unchanged.
 *
 * `decide` must be pure: it may run several times and only its last answer counts.
 */
export function updateWithRetry<R>(
  store: Pick<FlowRunStore, 'get' | 'update'>,
  runId: string,
  decide: (run: FlowRun, version: string) => UpdateDecision<R>,
  options: UpdateWithRetryOptions = {},
): Promise<UpdateOutcome<R>> {
  const rounds = () => readDecideWrite(store, runId, decide, options);
  return options.turns === undefined ? rounds() : options.turns.run(runId, rounds);
}

/** The rounds of updateWithRetry, in this process's turn for the run when it takes turns. */
async function readDecideWrite<R>(
  store: Pick<FlowRunStore, 'get' | 'update'>,
  runId: string,
  decide: (run: FlowRun, version: string) => UpdateDecision<R>,
  options: UpdateWithRetryOptions,
): Promise<UpdateOutcome<R>> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? UPDATE_RETRY_DEFAULTS.maxAttempts);
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => delay(ms));

  let known = options.known;
  for (let attempt = 1; ; attempt += 1) {
    const fromKnown = known !== undefined;
    const current = known ?? (await store.get(runId));
    known = undefined;
    if (current === null) return { kind: 'not_found' };
    const decision = decide(current.run, current.version);
    if (fromKnown && (decision.kind === 'noop' || isEmptyPatch(decision.patch))) {
      attempt -= 1; // the known round is not an attempt: decide again on a fresh read
      continue;
    }
    if (decision.kind === 'noop') {
      return { kind: 'noop', reason: decision.reason, result: decision.result, attempts: attempt };
    }
    if (isEmptyPatch(decision.patch)) {
      return {
        kind: 'noop',
        reason: EMPTY_PATCH_REASON,
        result: decision.result,
        attempts: attempt,
      };
    }
    try {
      const written = await store.update(runId, decision.patch, current.version);
      return {
        kind: 'written',
        result: decision.result,
        run: written.run,
        version: written.version,
        attempts: attempt,
      };
    } catch (error) {
      // Deleted between our read and our write.
      if (error instanceof RunNotFoundError) return { kind: 'not_found' };
      if (!(error instanceof VersionConflictError)) throw error;
      if (fromKnown) {
        attempt -= 1;
        continue;
      }
      if (attempt >= maxAttempts) throw new ConflictRetriesExhaustedError(runId, attempt);
      await sleep(
        backoffDelayMs(
          attempt,
          random,
          options.baseDelayMs ?? UPDATE_RETRY_DEFAULTS.baseDelayMs,
          options.maxDelayMs ?? UPDATE_RETRY_DEFAULTS.maxDelayMs,
        ),
      );
    }
  }
}
