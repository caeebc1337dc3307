import type { ArtifactStore } from '@tda/artifacts';
import type { FlowRun } from '@tda/contracts';
import type { RunPatch } from '@tda/flow-engine';
import {
  FlowStoreError,
  VersionConflictError,
  type FlowRunStore,
  type RunListPage,
  type RunCountQuery,
  RunListQuery,
  type VersionedRun,
} from '@tda/flow-store';
import type { ChaosController } from './chaos-controller';

/** The store error a finalize gets when the chaos suite drops its write. */
export class InjectedStoreError extends FlowStoreError {
  constructor(message: string) {
    super('UPSTREAM_UNAVAILABLE', message);
  }
}

export interface ChaosStoreOptions {
  chaos: ChaosController;
  /** The orchestrator's store binds each created run to its plan (by owner id). */
  bindRuns?: boolean;
  /**
   * Workers' stores fail the planned finalize writes (the step's SUCCEEDED write) after
   * checking that the artifact it points at was already written.
   */
  failFinalize?: { artifacts: Pick<ArtifactStore, 'exists'> };
}

/**
 * A FlowRunStore decorator: the real store underneath, plus the chaos suite's faults (a finalize
 * write that fails after the artifact exists) and bookkeeping (run binding, conflict counts).
 */
export class ChaosFlowRunStore implements FlowRunStore {
  constructor(
    private readonly inner: FlowRunStore,
    private readonly options: ChaosStoreOptions,
  ) {}

  create(run: FlowRun): Promise<VersionedRun> {
    // Bound before the write: the orchestrator publishes step-ready right after its first advance.
    if (this.options.bindRuns === true) this.options.chaos.bind(run);
    return this.inner.create(run);
  }

  get(runId: string): Promise<VersionedRun | null> {
    return this.inner.get(runId);
  }

  list(query: RunListQuery): Promise<RunListPage> {
    return this.inner.list(query);
  }

  count(query: RunCountQuery): Promise<number> {
    return this.inner.count(query);
  }

  async update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    await this.maybeFailFinalize(runId, patch);
    try {
      return await this.inner.update(runId, patch, expectedVersion);
    } catch (error) {
      if (error instanceof VersionConflictError) this.options.chaos.countConflict(runId);
      throw error;
    }
  }

  private async maybeFailFinalize(runId: string, patch: RunPatch): Promise<void> {
    const { chaos, failFinalize } = this.options;
    const target = chaos.planFor(runId)?.finalizeFailure;
    if (failFinalize === undefined || target === undefined) return;
    if (patch[`steps.${target.stepId}.status`] !== 'SUCCEEDED') return;
    const key = `finalize:${runId}:${target.stepId}`;
    const n = chaos.next(key);
    if (n >= target.failures) return;
    const uri = patch[`steps.${target.stepId}.outputs.gcs_uri`];
    const artifactWritten = typeof uri === 'string' && (await failFinalize.artifacts.exists(uri));
    chaos.record({
      kind: 'finalize_write_failed',
      runId,
      stepId: target.stepId,
      action: 'finalize_failed',
      detail: { failure: n + 1, of: target.failures, artifactWritten },
    });
    throw new InjectedStoreError(
      `chaos: finalize write ${n + 1}/${target.failures} of ${target.stepId} lost`,
    );
  }
}

/** A finalize write to hold: the `stepId` step of the run triggered by `ownerId`. */
export interface FinalizeHold {
  ownerId: string;
  stepId: string;
}

/**
 * A FlowRunStore decorator for the worker process the chaos suite kills after its artifact write:
 * the planned step's SUCCEEDED write never completes (`onHold` tells the test, which then
 * SIGKILLs the process). Runs are recognised by owner id, learnt from the reads that pass through
 * (the harness reads the run before it claims), so it costs no extra read.
 */
export class FinalizeHoldingStore implements FlowRunStore {
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly inner: FlowRunStore,
    private readonly holds: readonly FinalizeHold[],
    private readonly onHold: (runId: string, stepId: string, uri: string | undefined) => void,
  ) {}

  create(run: FlowRun): Promise<VersionedRun> {
    return this.inner.create(run);
  }

  async get(runId: string): Promise<VersionedRun | null> {
    const read = await this.inner.get(runId);
    if (read?.run.ownerId !== undefined) this.owners.set(runId, read.run.ownerId);
    return read;
  }

  list(query: RunListQuery): Promise<RunListPage> {
    return this.inner.list(query);
  }

  count(query: RunCountQuery): Promise<number> {
    return this.inner.count(query);
  }

  update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    const owner = this.owners.get(runId);
    const hold = this.holds.find(
      (h) => h.ownerId === owner && patch[`steps.${h.stepId}.status`] === 'SUCCEEDED',
    );
    if (hold === undefined) return this.inner.update(runId, patch, expectedVersion);
    const uri = patch[`steps.${hold.stepId}.outputs.gcs_uri`];
    this.onHold(runId, hold.stepId, typeof uri === 'string' ? uri : undefined);
    return new Promise<never>(() => undefined);
  }
}
