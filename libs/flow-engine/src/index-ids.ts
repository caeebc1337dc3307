import { createHash } from 'node:crypto';

/** Hex digits of the id hash: 96 bits, collision-free for any realistic number of steps. */
const ID_HASH_LENGTH = 24;

function digest(kind: string, runId: string, stepId: string): string {
  return createHash('sha256')
    .update(`${kind}\n${runId}\n${stepId}`)
    .digest('hex')
    .slice(0, ID_HASH_LENGTH);
}

/**
 * reports/{reportId} of an LLM_REPORT step (seed 001 index). Deterministic from (runId, stepId),
 * so the worker (outputs.reportId) and the orchestrator (the index document) name the same
 * report without talking to each other, and a replay or redelivery names it again.
 */
export function reportIdFor(runId: string, stepId: string): string {
  return `rpt_${digest('report', runId, stepId)}`;
}

/** recommendations/{recoId} of an LLM_RECOMMENDATION step; deterministic like reportIdFor. */
export function recommendationIdFor(runId: string, stepId: string): string {
  return `rec_${digest('recommendation', runId, stepId)}`;
}
