import type { FlowRun } from '@tda/contracts';

/** Subcollection of a run document holding its steps' checkpoints, one document per stepId. */
export const CHECKPOINTS_SUBCOLLECTION = 'checkpoints';

/**
 * A step's checkpoint: a document beside the run (`flow_runs/{runId}/checkpoints/{stepId}`) that
 * a long step writes while it runs (seed 003 best-so-far results), kept out of the run document
 * (its 1 MiB size and one-write-per-second rate). Semantics shared by every adapter (conformance
 * suite):
 *
 * - `writeCheckpoint` replaces the whole document, only if `guard` holds for the run document
 *   read in the same transaction (the lease holder's check, flow-engine holdsStepLease):
 *   'written', or 'refused' when the guard fails or the run does not exist — nothing written.
 * - `readCheckpoint` returns the stored document (a copy) or null; the caller validates it.
 */
export interface StepCheckpointStore {
  writeCheckpoint(
    runId: string,
    stepId: string,
    data: Record<string, unknown>,
    guard: (run: FlowRun) => boolean,
  ): Promise<'written' | 'refused'>;
  readCheckpoint(runId: string, stepId: string): Promise<Record<string, unknown> | null>;
}
