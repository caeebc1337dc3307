import { OrchestratorError } from '../orchestrator.errors';

/**
 * A subscription or snapshot the broker does not have (POST /admin/replay, /admin/snapshots):
 * 404. A subscription that is not one of the topology's is a 400 instead (the request names
 * something replay does not apply to).
 */
export class ReplayTargetNotFoundError extends OrchestratorError {
  readonly code = 'NOT_FOUND' as const;
}

/** POST /admin/snapshots with a name that is taken: 409. */
export class SnapshotExistsError extends OrchestratorError {
  readonly code = 'CONFLICT' as const;

  override get retryable(): boolean {
    return false;
  }
}

/** The broker failed a seek or a snapshot operation for another reason: 502, retryable. */
export class ReplayBrokerError extends OrchestratorError {
  readonly code = 'UPSTREAM_UNAVAILABLE' as const;
}
