import { Inject, Injectable } from '@nestjs/common';
import type { ErrorInfo, FlowRun } from '@tda/contracts';
import { isTerminalRunStatus, withAdvance } from '@tda/flow-engine';
import type { FlowRunStore } from '@tda/flow-store';
import { logEvent, type Logger } from '@tda/observability';
import type { RunDecision } from '../dispatch/run-decision.types';
import { RunWriter } from '../dispatch/run-writer.service';
import { LOGGER, RUN_STORE } from '../orchestrator.tokens';
import { listRunPages } from './run-pages';

/** Bound on the pages read to find the first run of an idempotency key (normally one page). */
const MAX_IDEMPOTENCY_PAGES = 10;

/** Older first: createdAt, then runId (the order that decides which duplicate wins). */
function isOlder(a: FlowRun, b: FlowRun): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.runId < b.runId);
}

/** Cancel a run that lost the idempotency race, naming the winner; a finished run stays. */
function discardDecision(run: FlowRun, now: Date, duplicateOf: string): RunDecision<undefined> {
  if (isTerminalRunStatus(run.status)) {
    return { kind: 'noop', reason: 'already_terminal', result: undefined };
  }
  const error: ErrorInfo = {
    code: 'CANCELLED',
    message: `duplicate trigger: the idempotency key already belongs to run ${duplicateOf}`,
    details: { duplicateOf },
    retryable: false,
  };
  const { patch } = withAdvance(run, { cancelRequestedAt: now.toISOString() }, now);
  return { kind: 'write', patch: { ...patch, error }, result: undefined };
}

/**
 * Idempotency keys across processes (README "Idempotency"): the oldest run of (owner, key) is
 * the one every racing trigger agrees on; a newer one is discarded before it ever starts.
 */
@Injectable()
export class IdempotencyKeys {
  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'list'>,
    private readonly writer: RunWriter,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The oldest run of (owner, key). */
  async firstRunWithKey(ownerId: string, key: string): Promise<FlowRun | undefined> {
    const { runs } = await listRunPages(
      this.store,
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
  async discardDuplicate(runId: string, duplicateOf: string): Promise<void> {
    const outcome = await this.writer.apply(
      runId,
      (run, now) => discardDecision(run, now, duplicateOf),
      'duplicate_trigger',
      'log',
    );
    // Not an advance the writer logs: the run never started, the line names the winner instead.
    if (outcome.kind === 'written') {
      logEvent(this.logger, 'info', 'run_advanced', {
        runId,
        cause: 'duplicate_trigger',
        status: outcome.run.status,
        duplicateOf,
      });
    }
  }
}
