import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import { advance, isEmptyPatch, type AdvanceResult } from '@tda/flow-engine';
import { updateWithRetry } from '@tda/flow-store';
import { logEvent } from '@tda/observability';
import { ORCHESTRATOR_CONTEXT, type OrchestratorContext } from '../orchestrator.options';
import {
  StepDispatcher,
  type DispatchedStep,
  type DispatchRequest,
} from './step-dispatcher.service';

/** What triggered an advance (logged with run_advanced). */
export type AdvanceCause = 'trigger' | 'step_event' | 'idempotent_replay';

export interface AdvanceRunOptions {
  cause: AdvanceCause;
  /**
   * READY steps to publish again besides the newly READY ones (reason 'retry'), decided on the
   * run as read/written. Used when a step event is redelivered: its first delivery may have
   * written the advance and then failed to publish.
   */
  republish?: (run: FlowRun) => readonly string[];
}

export type AdvanceRunOutcome =
  | { kind: 'not_found' }
  | {
      kind: 'written' | 'noop';
      /** The run after this advance (as written, or as read when there was nothing to write). */
      run: FlowRun;
      advance: AdvanceResult;
      dispatched: DispatchedStep[];
    };

/**
 * Read -> advance (pure) -> conditional write -> publish step-ready for the newly READY steps
 * (DESIGN §5.2). Publishing happens only after the write succeeded, so a message never announces
 * a READY that is not stored; if publishing fails the error propagates (the step-event handler
 * nacks; the reconciler republishes READY steps that stay unclaimed).
 */
@Injectable()
export class RunAdvancer {
  constructor(
    @Inject(ORCHESTRATOR_CONTEXT) private readonly context: OrchestratorContext,
    private readonly dispatcher: StepDispatcher,
  ) {}

  async advanceRun(runId: string, options: AdvanceRunOptions): Promise<AdvanceRunOutcome> {
    const outcome = await updateWithRetry(
      this.context.store,
      runId,
      (run) => {
        const decision = advance(run, this.context.clock());
        return isEmptyPatch(decision.patch)
          ? { kind: 'noop', reason: 'nothing_to_advance', result: { decision, read: run } }
          : { kind: 'write', patch: decision.patch, result: { decision, read: run } };
      },
      { random: this.context.random },
    );
    if (outcome.kind === 'not_found') return outcome;
    const { decision } = outcome.result;
    const run = outcome.kind === 'written' ? outcome.run : outcome.result.read;
    if (outcome.kind === 'written') this.logAdvanced(run, decision, options.cause);
    const requests: DispatchRequest[] = decision.newlyReady.map((stepId) => ({
      stepId,
      reason: 'advance',
    }));
    for (const stepId of options.republish?.(run) ?? []) {
      if (!decision.newlyReady.includes(stepId)) requests.push({ stepId, reason: 'retry' });
    }
    const dispatched = requests.length > 0 ? await this.dispatcher.dispatch(run, requests) : [];
    return { kind: outcome.kind, run, advance: decision, dispatched };
  }

  /** The run_advanced line and counter for a written advance (also for cancel/reconcile). */
  logAdvanced(run: FlowRun, decision: AdvanceResult, cause: string): void {
    this.context.metrics.runsAdvanced.inc({ runStatus: decision.runStatus });
    logEvent(this.context.logger, 'info', 'run_advanced', {
      runId: run.runId,
      cause,
      previousStatus: decision.previousRunStatus,
      status: decision.runStatus,
      newlyReady: decision.newlyReady,
      newlySkipped: decision.newlySkipped,
      newlyCancelled: decision.newlyCancelled,
      ...(decision.runError === undefined ? {} : { errorCode: decision.runError.code }),
    });
  }
}
