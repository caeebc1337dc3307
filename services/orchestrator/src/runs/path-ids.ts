import { InvalidRequestError, isStorageSafeStepId, isValidRunId } from '@tda/flow-engine';

/** 400 for a malformed runId path parameter (never a store lookup with it). */
export function assertRunId(runId: string): void {
  const shown = runId.slice(0, 200); // before the guard, which narrows runId
  if (!isValidRunId(runId)) {
    throw new InvalidRequestError(`'${shown}' is not a runId`, {
      parameter: 'runId',
      example: '20260115-100000_BTC-USDT_abc12',
    });
  }
}

/** 400 for a malformed stepId path parameter. */
export function assertStepIdParam(stepId: string): void {
  const shown = stepId.slice(0, 200);
  if (!isStorageSafeStepId(stepId)) {
    throw new InvalidRequestError(`'${shown}' is not a stepId`, {
      parameter: 'stepId',
    });
  }
}
