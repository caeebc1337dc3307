/** The EvaluationStore (evaluations/{evaluationId}). */
export const EVALUATION_STORE = Symbol('tda.orchestrator.evaluationStore');
/** The candles the scores are computed from (the configured market data source). */
export const SCORING_CANDLES = Symbol('tda.orchestrator.scoringCandles');
