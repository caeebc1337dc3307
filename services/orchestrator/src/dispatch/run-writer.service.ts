import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import type { AdvanceResult } from '@tda/flow-engine';
import { KeyedMutex, updateWithRetry, type FlowRunStore } from '@tda/flow-store';
import { describeError, logEvent, type Logger, type TdaMetrics } from '@tda/observability';
import { StepDispatchError } from '../orchestrator.errors';
import {
  CLOCK,
  LOGGER,
  METRICS,
  RANDOM,
  RUN_STORE,
  type Clock,
  type RandomSource,
} from '../orchestrator.tokens';
import type {
  DispatchPolicy,
  RunDecision,
  RunWriteLimits,
  RunWriteOutcome,
  WriteCause,
} from './run-decision.types';
import {
  StepDispatcher,
  type DispatchedStep,
  type DispatchRequest,
} from './step-dispatcher.service';

/** What updateWithRetry carries from the decision that stood. */
interface Decided<R> {
  decision: RunDecision<R>;
  read: FlowRun;
}

/**
 * The one way the orchestrator writes a run (DESIGN §3, §5.2): read → pure decision →
 * conditional update, re-read and re-decided on a conflict (updateWithRetry; an empty patch is
 * a noop) → run_advanced when written → step-ready for the decided steps, only after the write
 * (a message never announces a READY that is not stored) → the dispatch policy on a publish
 * failure.
 */
@Injectable()
export class RunWriter {
  /** This instance's writes of one run take turns (a step event, a cancel, admission). */
  private readonly turns = new KeyedMutex();

  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'get' | 'update'>,
    private readonly dispatcher: StepDispatcher,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) private readonly metrics: Pick<TdaMetrics, 'runsAdvanced'>,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: RandomSource,
  ) {}

  /** `decide` gets the run as read and the clock's now; it may run several times (conflicts). */
  async apply<R>(
    runId: string,
    decide: (run: FlowRun, now: Date) => RunDecision<R>,
    cause: WriteCause,
    policy: DispatchPolicy,
    limits: RunWriteLimits = {},
  ): Promise<RunWriteOutcome<R>> {
    const outcome = await updateWithRetry<Decided<R>>(
      this.store,
      runId,
      (read) => {
        const decision = decide(read, this.clock());
        return decision.kind === 'write'
          ? { kind: 'write', patch: decision.patch, result: { decision, read } }
          : { kind: 'noop', reason: decision.reason, result: { decision, read } };
      },
      {
        random: this.random,
        turns: this.turns,
        ...(limits.maxAttempts === undefined ? {} : { maxAttempts: limits.maxAttempts }),
      },
    );
    if (outcome.kind === 'not_found') return outcome;
    const { decision, read } = outcome.result;
    const run = outcome.kind === 'written' ? outcome.run : read;
    if (outcome.kind === 'written' && decision.kind === 'write' && decision.advance) {
      this.logAdvanced(run, decision.advance, cause);
    }
    const sent = await this.dispatch(run, decision.dispatch ?? [], cause, policy);
    return { kind: outcome.kind, run, result: decision.result, ...sent };
  }

  private logAdvanced(run: FlowRun, decision: AdvanceResult, cause: WriteCause): void {
    this.metrics.runsAdvanced.inc({ runStatus: decision.runStatus });
    logEvent(this.logger, 'info', 'run_advanced', {
      runId: run.runId,
      cause,
      previousStatus: decision.previousRunStatus,
      status: decision.runStatus,
      newlyReady: decision.newlyReady,
      newlySkipped: decision.newlySkipped,
      newlyCancelled: decision.newlyCancelled,
      // Flow 5: the dynamic steps this write inserted (addedBy on each names who asked).
      ...(decision.newlyAdded.length === 0 ? {} : { newlyAdded: decision.newlyAdded }),
      ...(decision.runError === undefined ? {} : { errorCode: decision.runError.code }),
    });
  }

  private async dispatch(
    run: FlowRun,
    requests: readonly DispatchRequest[],
    cause: WriteCause,
    policy: DispatchPolicy,
  ): Promise<{ dispatched: DispatchedStep[]; dispatchFailure?: StepDispatchError }> {
    if (requests.length === 0) return { dispatched: [] };
    try {
      return { dispatched: await this.dispatcher.dispatch(run, requests) };
    } catch (error) {
      if (policy === 'throw') throw error;
      if (policy === 'report') {
        return { dispatched: [], dispatchFailure: asDispatchError(run, requests, error) };
      }
      logEvent(
        this.logger,
        'warn',
        'dispatch_failed',
        { runId: run.runId, error: describeError(error) },
        `step-ready publish after a ${cause} write failed; the reconciler will republish`,
      );
      return { dispatched: [] };
    }
  }
}

/** dispatch() fails with StepDispatchError; anything else is wrapped so `report` has one type. */
function asDispatchError(
  run: FlowRun,
  requests: readonly DispatchRequest[],
  error: unknown,
): StepDispatchError {
  if (error instanceof StepDispatchError) return error;
  return new StepDispatchError(
    run.runId,
    requests.map((r) => r.stepId),
    [error],
  );
}
