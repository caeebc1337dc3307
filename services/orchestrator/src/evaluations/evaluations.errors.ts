import { TdaError } from '@tda/contracts';

/** No such evaluation, or another owner's (indistinguishable: 404). */
export class EvaluationNotFoundApiError extends TdaError {
  constructor(evaluationId: string) {
    super('NOT_FOUND', `evaluation '${evaluationId}' not found`, { details: { evaluationId } });
  }
}
