import type { StepHandler, StepResult } from '@tda/worker-kit';

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
 * Wraps a StepHandler and reports every execute/recover call to `sink`. Behaviour is unchanged:
 * same step type, same inputs validation, `recover` present exactly when the handler has one
 * (the harness treats a handler without it differently).
 */
export function countingHandler(
  inner: StepHandler,
  service: string,
  sink: ExecutionSink,
): StepHandler {
  const emit = (
    phase: ExecutionRecord['phase'],
    context: { run: { runId: string }; stepId: string; attempt: number },
  ): void =>
    sink({
      pid: process.pid,
      service,
      runId: context.run.runId,
      stepId: context.stepId,
      attempt: context.attempt,
      phase,
      at: Date.now(),
    });
  const recover = inner.recover?.bind(inner);
  return {
    stepType: inner.stepType,
    validateInputs: (run, stepId, step) => inner.validateInputs(run, stepId, step),
    execute: async (context): Promise<StepResult> => {
      emit('start', context);
      try {
        const result = await inner.execute(context);
        emit('completed', context);
        return result;
      } catch (error) {
        emit('threw', context);
        throw error;
      }
    },
    ...(recover === undefined
      ? {}
      : {
          recover: (context) => {
            emit('recover', context);
            return recover(context);
          },
        }),
  };
}
