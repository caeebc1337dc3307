import { OrchestratorError } from '../orchestrator.errors';

type Details = Readonly<Record<string, unknown>>;

/** A run refers to something that does not exist for its owner (another owner's too): 404. */
export class ReferenceNotFoundError extends OrchestratorError {
  constructor(message: string, details: Details = {}) {
    super('NOT_FOUND', message, details);
  }
}

/** A run refers to something that exists but cannot be used by it (another symbol...): 422. */
export class InvalidReferenceError extends OrchestratorError {
  constructor(message: string, details: Details = {}) {
    super('INVALID_REFERENCE', message, details);
  }
}
