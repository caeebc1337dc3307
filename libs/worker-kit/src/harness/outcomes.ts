import { isTdaError, type ErrorInfo, type StepExecution } from '@tda/contracts';
import { errorInfo, type FinalizeOutcome } from '@tda/flow-engine';
import { safeName, type WrittenArtifact } from '../artifact-writer';
import type { CancelCause } from '../lease-keeper';
import type { StepResult } from '../step-handler';

/** A handler's result with its written primary artifact → the finalize outcome. */
export function finalizeOutcome(
  result: StepResult,
  primary: WrittenArtifact,
  base: StepExecution,
  owner: string,
): FinalizeOutcome {
  const execution: StepExecution = {
    ...base,
    worker: owner,
    artifact: { ...primary },
    ...result.execution,
  };
  const outputs: Record<string, unknown> = { ...result.outputs };
  delete outputs['execution'];
  delete outputs['gcs_uri'];
  if (result.failure !== undefined) {
    return {
      status: 'FAILED',
      error: errorInfo(result.failure.code, result.failure.message, result.failure.details),
      outputs,
      execution,
    };
  }
  return { status: 'SUCCEEDED', gcsUri: result.primaryUri, outputs, execution };
}

/** A step stopped because its run was cancelled, finished or passed its deadline. */
export function cancelledOutcome(cause: CancelCause, execution: StepExecution): FinalizeOutcome {
  const message =
    cause === 'deadline_passed'
      ? 'step stopped: the run passed its deadline'
      : cause === 'run_finished'
        ? 'step stopped: the run already finished'
        : 'step stopped: run cancel requested';
  return { status: 'CANCELLED', error: errorInfo('CANCELLED', message, { cause }), execution };
}

/**
 * Any TdaError → its ErrorInfo (+ tries when it was retried), whatever library raised it;
 * anything else → INTERNAL_ERROR with the error class name only: a raw message may embed inputs
 * or model output (DESIGN.md §6).
 */
export function stepErrorInfo(error: unknown, tries: number): ErrorInfo {
  if (isTdaError(error)) {
    const info = error.toErrorInfo();
    if (tries > 1) info.details = { ...info.details, tries };
    return info;
  }
  const errorClass = safeName(error);
  return errorInfo('INTERNAL_ERROR', `step handler failed unexpectedly (${errorClass})`, {
    errorClass,
    ...(tries > 0 ? { tries } : {}),
  });
}
