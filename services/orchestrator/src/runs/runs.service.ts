import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import { blockedOn, type BlockedOnExplanation } from '@tda/flow-engine';
import { RunNotFoundError, type FlowRunStore, type RunListPage } from '@tda/flow-store';
import { RunWriter } from '../dispatch/run-writer.service';
import { RunConflictError } from '../orchestrator.errors';
import { CLOCK, RUN_STORE, type Clock } from '../orchestrator.tokens';
import { cancelDecision } from './cancel.decision';
import { assertRunId, assertStepIdParam } from './path-ids';
import { RunAdmission } from './run-admission.service';
import { parseRunListQuery } from './run-list-query';

/**
 * The API's use cases on an owner's existing runs: read, list, cancel, blocked-on (triggers are
 * RunTrigger's). The orchestrator is the only writer of run-level fields (DESIGN §3); every write
 * goes through RunWriter.
 */
@Injectable()
export class RunsService {
  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'get' | 'list'>,
    private readonly writer: RunWriter,
    private readonly admission: RunAdmission,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * The run if it belongs to `ownerId`. Another owner's run is the same 404 as a missing one:
   * its existence is not disclosed (README "Identity and owners").
   */
  async get(runId: string, ownerId: string): Promise<FlowRun> {
    assertRunId(runId);
    const found = await this.store.get(runId);
    if (found === null || found.run.ownerId !== ownerId) throw new RunNotFoundError(runId);
    return found.run;
  }

  /** One owner's runs: the owner is a filter of the store query, never applied afterwards. */
  list(rawQuery: Readonly<Record<string, unknown>>, ownerId: string): Promise<RunListPage> {
    return this.store.list({ ...parseRunListQuery(rawQuery), ownerId });
  }

  /**
   * Idempotent cancel (DESIGN §5.5): one write sets cancelRequestedAt, the run CANCELLED and its
   * PENDING/READY steps CANCELLED; RUNNING steps see it on their next heartbeat. Already
   * CANCELLED -> the run unchanged; SUCCEEDED/FAILED -> RunConflictError (409).
   */
  async cancel(runId: string, ownerId: string): Promise<FlowRun> {
    // The owner never changes: checking it on a read before the conditional write is exact.
    await this.get(runId, ownerId);
    // A cancel makes no step READY: the policy never comes into play.
    const outcome = await this.writer.apply(runId, cancelDecision, 'cancel', 'log');
    if (outcome.kind === 'not_found') throw new RunNotFoundError(runId);
    const { run } = outcome;
    if (outcome.kind === 'written') {
      // A RUNNING run freed its slot; a queued one moved the runs behind it up.
      await this.admission.admitQueuedSafely('cancel');
      return run;
    }
    if (run.status === 'SUCCEEDED' || run.status === 'FAILED') {
      throw new RunConflictError(`run '${runId}' already finished as ${run.status}`, {
        runId,
        status: run.status,
      });
    }
    return run;
  }

  async blockedOn(runId: string, stepId: string, ownerId: string): Promise<BlockedOnExplanation> {
    assertStepIdParam(stepId);
    const run = await this.get(runId, ownerId);
    const queue = run.status === 'PENDING' ? await this.admission.queueEntry(runId) : undefined;
    return blockedOn(run, stepId, this.clock(), queue === undefined ? {} : { queue });
  }
}
