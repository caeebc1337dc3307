import type { ArtifactStore } from '@tda/artifacts';
import type { FlowRun } from '@tda/contracts';
import type { RunPatch } from '@tda/flow-engine';
import {
  VersionConflictError,
  type FlowRunStore,
  type RunListPage,
  type RunListQuery,
  type VersionedRun,
} from '@tda/flow-store';
import type { ChaosController } from './chaos-controller';

/** The store error a finalize gets when the chaos suite drops its write. */
export class InjectedStoreError extends Error {
  readonly code = 'UPSTREAM_UNAVAILABLE';

  constructor(message: string) {
    super(message);
    this.name = 'InjectedStoreError';
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
