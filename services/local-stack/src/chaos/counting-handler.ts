import {
  callExecute,
  callRecover,
  type AnyStepHandler,
  type StepContext,
  type StepResult,
} from '@tda/worker-kit';

/** One handler call, as the chaos suite counts them (per runId, stepId and attempt). */
export interface ExecutionRecord {
  pid: number;
  service: string;
  runId: string;
  stepId: string;
  attempt: number;
  /**
   * start → completed | threw (an execute call); recover (a recovery from the artifact);
   * finalize_held (the chaos worker process holds this step's finalize write, see
   * FinalizeHoldingStore).
   */
  phase: 'start' | 'completed' | 'threw' | 'recover' | 'finalize_held';
  at: number;
  /** finalize_held: the artifact the held finalize points at. */
  uri?: string;
}

export type ExecutionSink = (record: ExecutionRecord) => void;

/**
 * Wraps a handler and reports every execute/recover call to `sink`. Behaviour is unchanged:
 * same descriptor (so the same inputs and upstream checks), `recover` present exactly when the
 * handler has one (the harness treats a handler without it differently).
 */
export function countingHandler(
  inner: AnyStepHandler,
  service: string,
  sink: ExecutionSink,
): AnyStepHandler {
  const emit = (phase: ExecutionRecord['phase'], context: StepContext): void =>
    sink({
      pid: process.pid,
      service,
      runId: context.run.runId,
      stepId: context.stepId,
      attempt: context.attempt,
      phase,
      at: Date.now(),
    });
  const execute = async (context: StepContext): Promise<StepResult> => {
    emit('start', context);
    try {
      const result = await callExecute(inner, context);
      emit('completed', context);
      return result;
    } catch (error) {
      emit('threw', context);
      throw error;
    }
  };
  const recover = (existing: never, context: StepContext): Promise<StepResult | null> => {
    emit('recover', context);
    return callRecover(inner, existing, context) ?? Promise.resolve(null);
  };
  return {
    descriptor: inner.descriptor,
    execute,
    ...(inner.recover === undefined ? {} : { recover }),
  };
}
