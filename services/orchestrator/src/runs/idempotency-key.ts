import type { ErrorInfo, FlowRun } from '@tda/contracts';
import { isTerminalRunStatus, withAdvance } from '@tda/flow-engine';
import { updateWithRetry } from '@tda/flow-store';
import { logEvent } from '@tda/observability';
import type { OrchestratorContext } from '../orchestrator.options';
import { listRunPages } from './run-pages';

/** Bound on the pages read to find the first run of an idempotency key (normally one page). */
const MAX_IDEMPOTENCY_PAGES = 10;

/** Older first: createdAt, then runId (the order that decides which duplicate wins). */
function isOlder(a: FlowRun, b: FlowRun): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.runId < b.runId);
}

/** The oldest run of (owner, key): the one every racing trigger agrees on. */
export async function firstRunWithKey(
  context: OrchestratorContext,
  ownerId: string,
  key: string,
): Promise<FlowRun | undefined> {
  const { runs } = await listRunPages(
    context.store,
    { ownerId, idempotencyKey: key },
    MAX_IDEMPOTENCY_PAGES,
  );
  let first: FlowRun | undefined;
  for (const run of runs) if (first === undefined || isOlder(run, first)) first = run;
  return first;
}

/**
 * Cancels a run that lost the idempotency race (an older run has its key); it was never
 * started, so nothing ran. Used by the trigger's re-check and by admission, which must never
 * start such a run.
 */
export async function discardDuplicate(
  context: OrchestratorContext,
  runId: string,
  duplicateOf: string,
): Promise<void> {
  const error: ErrorInfo = {
    code: 'CANCELLED',
    message: `duplicate trigger: the idempotency key already belongs to run ${duplicateOf}`,
    details: { duplicateOf },
    retryable: false,
  };
  const outcome = await updateWithRetry(
    context.store,
    runId,
    (run) => {
      if (isTerminalRunStatus(run.status)) {
        return { kind: 'noop', reason: 'already_terminal', result: undefined };
      }
      const now = context.clock();
      const { patch } = withAdvance(run, { cancelRequestedAt: now.toISOString() }, now);
      return { kind: 'write', patch: { ...patch, error }, result: undefined };
    },
    { random: context.random },
  );
  if (outcome.kind === 'written') {
    logEvent(context.logger, 'info', 'run_advanced', {
      runId,
      cause: 'duplicate_trigger',
      status: outcome.run.status,
      duplicateOf,
    });
  }
}
