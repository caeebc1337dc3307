import { OrchestratorError } from '../orchestrator.errors';

type Details = Readonly<Record<string, unknown>>;

/**
 * A subscription or snapshot the broker does not have (POST /admin/replay, /admin/snapshots):
 * 404. A subscription that is not one of the topology's is a 400 instead (the request names
 * something replay does not apply to).
 */
export class ReplayTargetNotFoundError extends OrchestratorError {
  constructor(message: string, details: Details = {}) {
    super('NOT_FOUND', message, details);
  }
}

/** POST /admin/snapshots with a name that is taken: 409. */
export class SnapshotExistsError extends OrchestratorError {
  constructor(message: string, details: Details = {}) {
    super('CONFLICT', message, details, false);
  }
}

/** The broker failed a seek or a snapshot operation for another reason: 502, retryable. */
export class ReplayBrokerError extends OrchestratorError {
  constructor(message: string, details: Details = {}) {
    super('UPSTREAM_UNAVAILABLE', message, details);
  }
}
