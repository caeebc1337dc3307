import type { FlowRun, StepType } from '@tda/contracts';
import {
  ConflictRetriesExhaustedError,
  KeyedMutex,
  updateWithRetry,
  type FlowRunStore,
  type UpdateDecision,
  type UpdateOutcome,
  type UpdateWithRetryOptions,
  type VersionedRun,
} from '@tda/flow-store';
import type { StepHarnessMetrics } from '../harness-metrics';
import type { HarnessLog } from './harness-log';

export interface StepWritesOptions {
  store: FlowRunStore;
  stepType: StepType;
  /** Read-decide-write rounds before the conflict is given up (thrown → nack). */
  maxAttempts: number;
  /** Uniform [0, 1) for the conflict backoff jitter; injectable for tests. */
  random?: () => number;
  metrics?: StepHarnessMetrics;
  log: HarnessLog;
}

/**
 * The worker's conditional writes on the run document (DESIGN.md §3): read → pure decision
 * (flow-engine) → update with the read's version, re-read and re-decided on every conflict.
 * Conflicts are counted and logged here; ConflictRetriesExhaustedError propagates (nack).
 */
export class StepWrites {
  /** Claims and finalizes of one run in this worker take turns instead of racing. */
  private readonly turns = new KeyedMutex();

  constructor(private readonly options: StepWritesOptions) {}

  get store(): FlowRunStore {
    return this.options.store;
  }

  get retry(): UpdateWithRetryOptions {
    const { maxAttempts, random } = this.options;
    return { maxAttempts, turns: this.turns, ...(random === undefined ? {} : { random }) };
  }

  async apply<R>(
    phase: 'claim' | 'finalize',
    runId: string,
    decide: (run: FlowRun, version: string) => UpdateDecision<R>,
    known?: VersionedRun,
  ): Promise<UpdateOutcome<R>> {
    const { metrics, stepType, log } = this.options;
    const event = phase === 'claim' ? 'step_claim_conflict' : 'step_finalize_conflict';
    try {
      const retry = known === undefined ? this.retry : { ...this.retry, known };
      const outcome = await updateWithRetry(this.options.store, runId, decide, retry);
      if (outcome.kind !== 'not_found' && outcome.attempts > 1) {
        metrics?.storeConflicts?.inc({ stepType, phase }, outcome.attempts - 1);
        log.info(event, {
          reason: 'version_conflict',
          attempts: outcome.attempts,
          resolvedAs: outcome.kind,
        });
      }
      return outcome;
    } catch (error) {
      if (error instanceof ConflictRetriesExhaustedError) {
        metrics?.storeConflicts?.inc({ stepType, phase }, error.attempts);
        if (phase === 'claim') metrics?.stepClaims?.inc({ stepType, result: 'conflict' });
        log.warn(event, {
          reason: 'conflict_retries_exhausted',
          attempts: error.attempts,
          action: 'nack',
        });
      }
      throw error;
    }
  }
}
