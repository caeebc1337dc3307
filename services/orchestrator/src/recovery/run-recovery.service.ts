import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import {
  buildRerun,
  generateRunId,
  InvalidRequestError,
  isStorageSafeStepId,
  isTerminalRunStatus,
  StepNotFoundError,
  type RetryDecision,
} from '@tda/flow-engine';
import { RunNotFoundError, type FlowRunStore } from '@tda/flow-store';
import { logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import { RunWriter } from '../dispatch/run-writer.service';
import { RunConflictError } from '../orchestrator.errors';
import {
  CLOCK,
  LOGGER,
  ORCHESTRATOR_CONFIG,
  RANDOM,
  RUN_STORE,
  type Clock,
  type RandomSource,
} from '../orchestrator.tokens';
import { assertRunId } from '../runs/path-ids';
import { RunAdmission } from '../runs/run-admission.service';
import { logRunCreated } from '../runs/run-created.log';
import { retryDecision } from './retry.decision';

const RERUN_BODY_KEYS = new Set(['fromStepId']);

function assertStepId(stepId: unknown, field: string): asserts stepId is string {
  if (!isStorageSafeStepId(stepId)) {
    throw new InvalidRequestError(`${field} must be a stepId`, {
      [field.includes('.') ? 'field' : 'parameter']: field,
      ...(typeof stepId === 'string' ? { value: stepId.slice(0, 200) } : {}),
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Recovery operations on runs (README "Admin and recovery operations"): retry FAILED steps of a
 * FAILED run in place, and rerun a run from a step into a NEW run that reuses the upstream
 * artifacts. Retry is one RunWriter write (flow-engine decideRetry, step-ready for the newly
 * READY steps); rerun builds the new run (buildRerun) and admits it like a trigger.
 */
@Injectable()
export class RunRecoveryService {
  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'get' | 'create'>,
    private readonly writer: RunWriter,
    private readonly admission: RunAdmission,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_DEFAULT_RUN_DEADLINE_SECONDS'>,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: RandomSource,
  ) {}

  /**
   * POST /runs/{runId}/steps/{stepId}/retry (stepIds = [stepId]) and POST /runs/{runId}/retry
   * (every FAILED step). One conditional write re-opens the steps and restarts the run; a
   * concurrent second request re-reads, finds the step already re-opened and returns the run
   * (idempotent). 404 unknown run/step; 409 a cancelled run, a step that is not FAILED, a run
   * that has not failed, other FAILED steps left out.
   */
  async retry(runId: string, ownerId: string, stepId?: string): Promise<FlowRun> {
    assertRunId(runId);
    if (stepId !== undefined) assertStepId(stepId, 'stepId');
    // Another owner's run is a 404; the owner never changes, so a read before the write is exact.
    const owned = await this.store.get(runId);
    if (owned === null || owned.run.ownerId !== ownerId) throw new RunNotFoundError(runId);
    // 'log': the re-opened run is stored; the reconciler republishes READY steps left unclaimed.
    const outcome = await this.writer.apply(
      runId,
      (run, now) => retryDecision(run, now, stepId),
      'retry',
      'log',
    );
    if (outcome.kind === 'not_found') throw new RunNotFoundError(runId);
    const { run, result: decision } = outcome;
    if (outcome.kind === 'written' && decision.kind === 'retry') {
      logEvent(this.logger, 'info', 'run_retried', {
        runId,
        retried: decision.retried,
        reopened: decision.reopened,
        newlyReady: decision.advance.newlyReady,
      });
      return run;
    }
    switch (decision.kind) {
      case 'already_retried':
        return run;
      case 'no_failed_steps':
        // The whole-run retry of a run an earlier retry already restarted: idempotent too.
        if (!isTerminalRunStatus(run.status) && Array.isArray(run['retryHistory'])) return run;
        throw new RunConflictError(`run '${runId}' has no FAILED step to retry`, {
          runId,
          status: run.status,
          reason: 'no_failed_steps',
        });
      case 'not_found': {
        const [missing = stepId ?? ''] = decision.stepIds;
        throw new StepNotFoundError(runId, missing);
      }
      case 'conflict':
        throw new RunConflictError(decision.message, {
          runId,
          ...(stepId === undefined ? {} : { stepId }),
          status: run.status,
          reason: decision.conflict.kind,
          ...conflictDetails(decision.conflict),
        });
      case 'retry':
        // A write decision always comes back written (or throws): unreachable.
        return run;
    }
  }

  /**
   * POST /runs/{runId}/rerun {fromStepId}: a new run (201) of the same flow, scope and owner,
   * with fromStepId and its downstream PENDING and every other step SUCCEEDED with the source's
   * outputs (reusedFrom); created and admitted like a trigger (quota 429, queued while the
   * running limits are reached). Its deadline window is the source's (deadlineAt - createdAt),
   * else the configured default.
   */
  async rerun(runId: string, body: unknown, ownerId: string): Promise<FlowRun> {
    assertRunId(runId);
    if (!isRecord(body)) {
      throw new InvalidRequestError('body must be an object {fromStepId}', { field: 'body' });
    }
    const unknown = Object.keys(body).filter((key) => !RERUN_BODY_KEYS.has(key));
    if (unknown.length > 0) {
      throw new InvalidRequestError(`unknown body fields: ${unknown.join(', ')}`, {
        unknownFields: unknown,
        allowed: [...RERUN_BODY_KEYS],
      });
    }
    const fromStepId = body['fromStepId'];
    assertStepId(fromStepId, 'fromStepId');
    const found = await this.store.get(runId);
    if (found === null || found.run.ownerId !== ownerId) throw new RunNotFoundError(runId);
    const source = found.run;
    const now = this.clock();
    const decision = buildRerun(source, {
      fromStepId,
      runId: generateRunId({
        createdAt: now,
        symbol: source.scope.symbol,
        random: this.random,
      }),
      now,
      ...this.deadlineOf(source),
    });
    if (decision.kind === 'step_not_found') throw new StepNotFoundError(runId, fromStepId);
    if (decision.kind === 'conflict') {
      throw new RunConflictError(decision.message, {
        runId,
        fromStepId,
        reason: 'upstream_not_succeeded',
        steps: decision.steps,
      });
    }
    const { run } = decision;
    // Like a trigger: the owner's active-runs quota (429), create-only, then an admission pass
    // starts it when the running limits allow (otherwise it waits PENDING in the queue).
    await this.admission.createWithinQuota(run.ownerId, async () => {
      await this.store.create(run);
    });
    logRunCreated(this.logger, run, {
      rerunOf: { runId, fromStepId },
      reused: decision.reused,
      rerun: decision.rerun,
    });
    // The run exists: a failed pass is logged and retried by the next one.
    return this.admission.admitCreated(run, 'trigger');
  }

  private deadlineOf(source: FlowRun): { deadlineMs?: number } {
    const deadline = Date.parse(source.deadlineAt ?? '');
    const created = Date.parse(source.createdAt);
    if (!Number.isNaN(deadline) && !Number.isNaN(created) && deadline > created) {
      return { deadlineMs: deadline - created };
    }
    const seconds = this.config.TDA_DEFAULT_RUN_DEADLINE_SECONDS;
    return seconds > 0 ? { deadlineMs: seconds * 1000 } : {};
  }
}

function conflictDetails(
  conflict: Extract<RetryDecision, { kind: 'conflict' }>['conflict'],
): Record<string, unknown> {
  switch (conflict.kind) {
    case 'step_not_failed':
      return { stepStatus: conflict.status, failedStepIds: conflict.failedStepIds };
    case 'other_failed_steps':
      return { failedStepIds: conflict.stepIds };
    case 'steps_running':
      return { runningStepIds: conflict.stepIds };
    case 'would_fail_again':
      return conflict.runError === undefined ? {} : { errorCode: conflict.runError.code };
    case 'run_cancelled':
    case 'run_not_failed':
      return {};
  }
}
