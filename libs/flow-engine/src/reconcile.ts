import type { FlowRun, FlowStep, StepType } from '@tda/contracts';
import { advance, type AdvanceResult } from './advance';
import { InvalidRequestError } from './errors';
import { decideLeaseExpiry, type LeaseExpiryDecision } from './lease';
import { applyPatch, isEmptyPatch, mergePatches, sortedSteps, type RunPatch } from './patch';
import { isTerminalRunStatus } from './run-status';
import { stepOf } from './step-lookup';
import { assertMaxAttemptsOption, DEFAULT_STEP_POLICY, isValidMaxAttempts } from './step-policy';
import { decideStepTimeout, STEP_TIMEOUT_GRACE_MS, type StepTimeoutDecision } from './step-timeout';
import { timestampMs, toTimestamp } from './time';

export interface ReconcileOptions {
  now: Date;
  /**
   * Operator override of the claims allowed per step, for every step type (orchestrator
   * TDA_MAX_STEP_ATTEMPTS). Without it: the value the claim recorded (`steps.<id>.maxAttempts`,
   * the worker's policy), else the step type's StepPolicy (seed 004: 3).
   */
  maxAttempts?: number;
  /** READY steps not claimed for this long get their step-ready message published again. */
  republishReadyAfterMs: number;
  /** Grace past `steps.<id>.deadlineAt` while the lease is valid. Default STEP_TIMEOUT_GRACE_MS. */
  stepTimeoutGraceMs?: number;
}

/** What the reconciler found out of line in one run (DESIGN §5.4 drift report). */
export type DriftKind =
  /** READY for longer than republishReadyAfterMs: its step-ready message was lost or ignored. */
  | 'ready_unclaimed'
  /** RUNNING with an expired (or no) lease: its worker is gone. */
  | 'lease_expired'
  /** RUNNING past deadlineAt + grace with a lease reaching beyond it (kept alive, overran). */
  | 'step_timeout'
  /** The run is past its deadlineAt and not yet FAILED RUN_TIMEOUT. */
  | 'run_deadline'
  /**
   * The document is behind its own rules (a lost step event or advance): steps whose
   * dependencies SUCCEEDED still PENDING, a run whose steps are all done (or one FAILED) but
   * that is not finished. Progress counters alone are refreshed without being reported.
   */
  | 'advance_pending'
  /** SUCCEEDED, but its artifact (outputs.gcs_uri) is not in storage (an I/O check; report only). */
  | 'artifact_missing';

export type DriftAction =
  | 'republish'
  | 'reclaim'
  | 'fail_step'
  | 'cancel_step'
  | 'fail_run'
  | 'advance'
  /** Nothing is changed automatically (artifact_missing): an operator decides. */
  | 'report_only';

export interface DriftItem {
  kind: DriftKind;
  action: DriftAction;
  stepId?: string;
  /** Sanitized facts behind the finding (timestamps, attempts, error code, ...). */
  detail: Record<string, unknown>;
}

export interface ReconcileResult {
  /** Timeout and lease decisions plus the advance they imply, as one conditional write. */
  patch: RunPatch;
  /** Publish a step-ready message for each: stale READY, reclaimed and newly READY steps. */
  republish: string[];
  reclaimed: string[];
  /** FAILED by lease expiry on the last attempt (LEASE_EXPIRED) or by STEP_TIMEOUT. */
  failed: string[];
  /** FAILED with STEP_TIMEOUT (a subset of `failed`). */
  timedOut: string[];
  cancelled: string[];
  /** Everything out of line, in stepId order, run-level items last. */
  drift: DriftItem[];
  advance: AdvanceResult;
}

export type RunningStepDecision =
  | (Exclude<StepTimeoutDecision, { kind: 'none' }> & { cause: 'step_timeout' })
  | (Exclude<LeaseExpiryDecision, { kind: 'none' }> & { cause: 'lease_expired' })
  | { kind: 'none' };

/** The claims allowed for a step: operator override, else what the claim recorded, else seed 004's. */
export function effectiveMaxAttempts(
  step: Pick<FlowStep, 'stepType' | 'maxAttempts'>,
  override?: number,
): number {
  if (override !== undefined) return override;
  if (isValidMaxAttempts(step.maxAttempts)) return step.maxAttempts;
  // A claim always records it; only a step never claimed under the policy lacks it.
  return DEFAULT_STEP_POLICY.maxAttempts;
}

/**
 * One RUNNING step under supervision: the step timeout first (it names the real cause when an
 * attempt overran its budget), then the lease rules (reclaim while attempt < maxAttempts, else
 * LEASE_EXPIRED; CANCELLED in a finished run).
 */
export function decideRunningStep(
  run: FlowRun,
  stepId: string,
  options: Pick<ReconcileOptions, 'now' | 'maxAttempts' | 'stepTimeoutGraceMs'>,
): RunningStepDecision {
  const timeout = decideStepTimeout(run, stepId, {
    now: options.now,
    graceMs: options.stepTimeoutGraceMs ?? STEP_TIMEOUT_GRACE_MS,
  });
  if (timeout.kind !== 'none') return { ...timeout, cause: 'step_timeout' };
  const step = stepOf(run, stepId);
  if (step === undefined) return { kind: 'none' };
  const expiry = decideLeaseExpiry(run, stepId, {
    now: options.now,
    maxAttempts: effectiveMaxAttempts(step, options.maxAttempts),
  });
  return expiry.kind === 'none' ? { kind: 'none' } : { ...expiry, cause: 'lease_expired' };
}

function assertReconcileOptions(options: ReconcileOptions): void {
  toTimestamp(options.now);
  const { maxAttempts, republishReadyAfterMs } = options;
  assertMaxAttemptsOption(maxAttempts);
  if (!Number.isFinite(republishReadyAfterMs) || republishReadyAfterMs < 0) {
    throw new InvalidRequestError('republishReadyAfterMs must be a non-negative number', {
      republishReadyAfterMs,
    });
  }
}

/** The findings of `behind` = advance of the document as read (before this pass changes anything). */
function advanceDrift(run: FlowRun, behind: AdvanceResult): DriftItem[] {
  if (isEmptyPatch(behind.patch)) return [];
  if (behind.runError?.code === 'RUN_TIMEOUT') {
    return [
      {
        kind: 'run_deadline',
        action: 'fail_run',
        detail: { deadlineAt: run.deadlineAt, cancelsSteps: behind.newlyCancelled },
      },
    ];
  }
  const detail: Record<string, unknown> = { runStatus: behind.runStatus };
  if (behind.newlyReady.length > 0) detail['newlyReady'] = behind.newlyReady;
  if (behind.newlySkipped.length > 0) detail['newlySkipped'] = behind.newlySkipped;
  if (behind.newlyCancelled.length > 0) detail['newlyCancelled'] = behind.newlyCancelled;
  if (behind.runError !== undefined) detail['errorCode'] = behind.runError.code;
  // Only counters out of date (a claim does not touch run-level progress; the next advance
  // does): refreshed by the write, but not drift worth reporting.
  if (behind.runStatus === run.status && Object.keys(detail).length === 1) return [];
  return [{ kind: 'advance_pending', action: 'advance', detail }];
}

/**
 * The reconciler's pass over one run (DESIGN §5.4), pure: RUNNING steps past their deadline fail
 * with STEP_TIMEOUT (decideStepTimeout), RUNNING steps whose lease expired are reclaimed / failed /
 * cancelled (decideLeaseExpiry, maxAttempts per step), READY steps older than the threshold are
 * republished (a lost message must not stall a run), and the run is advanced (deadline, failure
 * policy, new READY steps). `drift` lists every finding with its action. Nothing to do -> empty
 * patch, nothing to republish, no drift.
 */
/** What one pass found per step, before the advance (step decisions and their drift). */
interface StepFindings {
  patches: RunPatch[];
  reclaimed: string[];
  failed: string[];
  timedOut: string[];
  cancelled: string[];
  /** READY steps never claimed within republishReadyAfterMs. */
  stale: string[];
  drift: DriftItem[];
}

/** A READY step waiting longer than the republish cutoff (or without readyAt) → republish. */
function readyDrift(
  stepId: string,
  step: FlowStep,
  nowMs: number,
  cutoffMs: number,
): DriftItem | undefined {
  const readyMs = timestampMs(step.readyAt);
  if (readyMs !== undefined && readyMs > cutoffMs) return undefined;
  return {
    kind: 'ready_unclaimed',
    action: 'republish',
    stepId,
    detail: {
      readyAt: step.readyAt ?? null,
      waitedMs: readyMs === undefined ? null : nowMs - readyMs,
      attempt: step.attempt,
    },
  };
}

type DecidedList = 'reclaimed' | 'failed' | 'timedOut' | 'cancelled';

/** The drift item of a RUNNING step's decision, and the lists the step goes to. */
function runningFinding(
  run: FlowRun,
  stepId: string,
  step: FlowStep,
  decision: Exclude<RunningStepDecision, { kind: 'none' }>,
  options: ReconcileOptions,
): { lists: DecidedList[]; item: DriftItem } {
  const base = {
    attempt: step.attempt,
    leaseOwner: step.lease?.owner ?? null,
    leaseExpiresAt: step.lease?.expiresAt ?? null,
  };
  const maxAttempts = effectiveMaxAttempts(step, options.maxAttempts);
  switch (decision.kind) {
    case 'timeout':
      return {
        lists: ['failed', 'timedOut'],
        item: {
          kind: 'step_timeout',
          action: 'fail_step',
          stepId,
          detail: { ...base, deadlineAt: step.deadlineAt, errorCode: 'STEP_TIMEOUT' },
        },
      };
    case 'reclaim':
      return {
        lists: ['reclaimed'],
        item: {
          kind: 'lease_expired',
          action: 'reclaim',
          stepId,
          detail: { ...base, maxAttempts },
        },
      };
    case 'fail':
      return {
        lists: ['failed'],
        item: {
          kind: 'lease_expired',
          action: 'fail_step',
          stepId,
          detail: { ...base, maxAttempts, errorCode: decision.error.code },
        },
      };
    case 'cancel':
      return {
        lists: ['cancelled'],
        item: {
          kind: decision.cause,
          action: 'cancel_step',
          stepId,
          detail: { ...base, runStatus: run.status },
        },
      };
  }
}

function findStepDrift(run: FlowRun, options: ReconcileOptions): StepFindings {
  const found: StepFindings = {
    patches: [],
    reclaimed: [],
    failed: [],
    timedOut: [],
    cancelled: [],
    stale: [],
    drift: [],
  };
  const nowMs = options.now.getTime();
  const cutoffMs = nowMs - options.republishReadyAfterMs;
  for (const [stepId, step] of sortedSteps(run)) {
    if (step.status === 'READY') {
      const item = readyDrift(stepId, step, nowMs, cutoffMs);
      if (item !== undefined) {
        found.stale.push(stepId);
        found.drift.push(item);
      }
      continue;
    }
    if (step.status !== 'RUNNING') continue;
    const decision = decideRunningStep(run, stepId, options);
    if (decision.kind === 'none') continue;
    found.patches.push(decision.patch);
    const { lists, item } = runningFinding(run, stepId, step, decision, options);
    for (const list of lists) found[list].push(stepId);
    found.drift.push(item);
  }
  return found;
}

export function reconcileRun(run: FlowRun, options: ReconcileOptions): ReconcileResult {
  assertReconcileOptions(options);
  const { patches, reclaimed, failed, timedOut, cancelled, stale, drift } = findStepDrift(
    run,
    options,
  );
  const behind = advance(run, options.now);
  drift.push(...advanceDrift(run, behind));
  const supervised = mergePatches(...patches);
  // No step decision (the usual pass): the advance of the document as read is the one to write.
  const next = patches.length === 0 ? behind : advance(applyPatch(run, supervised), options.now);
  const patch = mergePatches(supervised, next.patch);
  const after = applyPatch(run, patch);
  // only steps that are (still) READY after this write are worth a message
  const republish = [...new Set([...stale, ...reclaimed, ...next.newlyReady])]
    .filter((id) => after.steps[id]?.status === 'READY')
    .sort();
  return { patch, republish, reclaimed, failed, timedOut, cancelled, drift, advance: next };
}

/**
 * The reconciler's pass over a run that already ended (FAILED, CANCELLED, SUCCEEDED), pure. Only
 * one thing can still be out of line there: a step left RUNNING because its worker died before a
 * heartbeat could tell it the run ended (cancel, fail-fast). Once its lease has expired it is
 * closed CANCELLED (decideLeaseExpiry: "abandoned after the run ended"; drift lease_expired /
 * cancel_step, as reconcileRun reports it) and the progress counters follow. A step whose lease is
 * still valid is left to its worker: its next heartbeat sees the run ended and finalizes it. No
 * step timeout, no republish, no advance and no progress-only write: nothing else about an ended
 * run changes. A run that is not terminal (re-opened since it was listed) -> nothing.
 */
export function reconcileEndedRun(
  run: FlowRun,
  options: Pick<ReconcileOptions, 'now'>,
): ReconcileResult {
  toTimestamp(options.now);
  const patches: RunPatch[] = [];
  const cancelled: string[] = [];
  const drift: DriftItem[] = [];
  if (isTerminalRunStatus(run.status)) {
    for (const [stepId, step] of sortedSteps(run)) {
      if (step.status !== 'RUNNING') continue;
      // maxAttempts does not matter in an ended run (always cancel); the step's own is honest.
      const decision = decideLeaseExpiry(run, stepId, {
        now: options.now,
        maxAttempts: effectiveMaxAttempts(step),
      });
      if (decision.kind !== 'cancel') continue;
      patches.push(decision.patch);
      cancelled.push(stepId);
      drift.push({
        kind: 'lease_expired',
        action: 'cancel_step',
        stepId,
        detail: {
          attempt: step.attempt,
          leaseOwner: step.lease?.owner ?? null,
          leaseExpiresAt: step.lease?.expiresAt ?? null,
          runStatus: run.status,
        },
      });
    }
  }
  const supervised = mergePatches(...patches);
  // advance on a terminal run only recomputes progress: counters follow the closed steps.
  const next = advance(applyPatch(run, supervised), options.now);
  const patch = cancelled.length === 0 ? supervised : mergePatches(supervised, next.patch);
  return {
    patch,
    republish: [],
    reclaimed: [],
    failed: [],
    timedOut: [],
    cancelled,
    drift,
    advance: next,
  };
}

/** A SUCCEEDED step's primary artifact, to be checked for existence (the check is I/O). */
export interface ArtifactExpectation {
  stepId: string;
  stepType: StepType;
  /** outputs.gcs_uri; undefined when a SUCCEEDED step has none (itself a finding). */
  uri?: string;
}

/** Every SUCCEEDED step of the run and the artifact it should have, in stepId order. */
export function expectedArtifacts(run: FlowRun): ArtifactExpectation[] {
  const expected: ArtifactExpectation[] = [];
  for (const [stepId, step] of sortedSteps(run)) {
    if (step.status !== 'SUCCEEDED') continue;
    const uri = step.outputs.gcs_uri;
    expected.push({
      stepId,
      stepType: step.stepType,
      ...(typeof uri === 'string' && uri !== '' ? { uri } : {}),
    });
  }
  return expected;
}

/** The drift item of a SUCCEEDED step whose artifact is missing (report only, never fixed). */
export function artifactMissingDrift(
  expectation: ArtifactExpectation,
  reason: 'no_uri' | 'not_found',
): DriftItem {
  return {
    kind: 'artifact_missing',
    action: 'report_only',
    stepId: expectation.stepId,
    detail: { reason, stepType: expectation.stepType, uri: expectation.uri ?? null },
  };
}
