/** The StepCheckpointStore the jobs API reads best-so-far from (null: none configured). */
export const CHECKPOINT_STORE = Symbol('tda.orchestrator.checkpointStore');
