import { OrchestratorError } from '../orchestrator.errors';

/**
 * GET /reports/{reportId} or /recommendations/{recoId} of an entry that does not exist or
 * belongs to another owner: the same 404, so ids of other owners cannot be probed.
 */
export class IndexEntryNotFoundError extends OrchestratorError {
  constructor(kind: 'report' | 'recommendation', id: string) {
    super('NOT_FOUND', `${kind} '${id}' does not exist`, {
      [kind === 'report' ? 'reportId' : 'recoId']: id,
    });
  }
}
