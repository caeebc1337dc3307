import type { FlowRun, RunStatus, StepStatus, StepType } from '@tda/contracts';
import { advance } from './advance';
import { describeNotExecutable, isExecutable, type NotExecutableReason } from './executable';
import { isEmptyPatch, sortedSteps } from './patch';
import { reusedFromOf } from './rerun';
import { isTerminalRunStatus } from './run-status';
import { timestampMs } from './time';

/*
 * Dry run of a Pub/Sub seek (issue 5 replay). Pub/Sub cannot list the messages a seek would
 * redeliver, so these previews derive them from TDA's own records in the run document:
 * - step-ready: a message is published when a step becomes READY (`readyAt`, also rewritten by a
 *   reclaim), and the reconciler republishes steps that stay READY;
 * - step-events: a worker publishes one after finalizing a step it claimed (`finishedAt`).
 * The result is an approximation from the document (a superset in the usual cases: e.g. a step
 * the reconciler failed itself is listed though no worker published an event for it); what
 * each receiver would do is decided by the same pure rules the receivers use now.
 */

export type StepReadyReplayDecision = 'execute' | 'takeover' | 'noop';

export interface StepReadyReplayItem {
  runId: string;
  runStatus: RunStatus;
  stepId: string;
  stepType: StepType;
  stepStatus: StepStatus;
  /** `ready_at`: readyAt >= since; `still_ready`: READY since earlier (reconciler republishes). */
  evidence: 'ready_at' | 'still_ready';
  readyAt?: string;
  decision: StepReadyReplayDecision;
  reason?: NotExecutableReason;
  /** 'execute', 'takeover: ...' or 'noop: <reason>'. */
  summary: string;
}

export interface ReplayPreviewOptions {
  /** Messages published at or after this are replayed. */
  since: Date;
  now: Date;
}

/**
 * The step-ready messages of `stepType` in `run` a seek to `since` would redeliver, each with
 * what a worker would do with it now: `execute` (isExecutable), `takeover` (the step is RUNNING
 * with an expired or missing lease: the worker re-claims it, or finalizes it from an existing
 * artifact) or `noop: <reason>` (ack, zero writes).
 */
export function previewStepReadyReplay(
  run: FlowRun,
  stepType: StepType,
  options: ReplayPreviewOptions,
): StepReadyReplayItem[] {
  const since = options.since.getTime();
  const items: StepReadyReplayItem[] = [];
  for (const [stepId, step] of sortedSteps(run)) {
    if (step.stepType !== stepType) continue;
    // A step a rerun reused was never dispatched in this run.
    if (reusedFromOf(step) !== undefined) continue;
    const readyMs = timestampMs(step.readyAt);
    let evidence: StepReadyReplayItem['evidence'];
    if (readyMs !== undefined && readyMs >= since) evidence = 'ready_at';
    else if (step.status === 'READY') evidence = 'still_ready';
    else continue;
    const base = {
      runId: run.runId,
      runStatus: run.status,
      stepId,
      stepType,
      stepStatus: step.status,
      evidence,
      ...(step.readyAt === undefined ? {} : { readyAt: step.readyAt }),
    };
    const verdict = isExecutable(run, stepId, stepType);
    if (verdict.executable) {
      items.push({ ...base, decision: 'execute', summary: 'execute' });
      continue;
    }
    const { reason } = verdict;
    if (reason.kind === 'not_ready' && reason.status === 'RUNNING') {
      const leaseMs = timestampMs(step.lease?.expiresAt);
      if (leaseMs === undefined || leaseMs <= options.now.getTime()) {
        items.push({
          ...base,
          decision: 'takeover',
          reason,
          summary:
            'takeover: the lease expired, a worker re-claims the step (or finalizes it from its artifact)',
        });
        continue;
      }
    }
    items.push({
      ...base,
      decision: 'noop',
      reason,
      summary: `noop: ${describeNotExecutable(reason)}`,
    });
  }
  return items;
}

export interface StepEventReplayItem {
  stepId: string;
  stepType: StepType;
  stepStatus: StepStatus;
  finishedAt: string;
}

export interface StepEventRunPreview {
  runId: string;
  runStatus: RunStatus;
  /** The step events of this run a seek to `since` would redeliver (lexicographic). */
  events: StepEventReplayItem[];
  /** `noop`: the advance writes nothing; `advance`: it would write (what the reconciler does too). */
  decision: 'noop' | 'advance';
  /** Steps the advance would make READY (and publish step-ready for). */
  wouldBecomeReady: string[];
  /**
   * READY dependents of the events' steps: the orchestrator publishes them again when it sees a
   * redelivered event (a harmless duplicate; none for a finished run).
   */
  wouldRepublish: string[];
  summary: string;
}

/**
 * The step events of `run` a seek of the step-events subscription to `since` would redeliver,
 * and what the orchestrator would do with them now: advance the run (an empty patch for a run
 * that is already advanced, in particular every finished run) and, for a redelivery, publish the
 * READY dependents again. Undefined when no event of this run falls in the window.
 */
export function previewStepEventReplay(
  run: FlowRun,
  options: ReplayPreviewOptions,
): StepEventRunPreview | undefined {
  const since = options.since.getTime();
  const events: StepEventReplayItem[] = [];
  for (const [stepId, step] of sortedSteps(run)) {
    if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(step.status)) continue;
    if (reusedFromOf(step) !== undefined) continue;
    // Workers publish events for steps they claimed (attempt >= 1); an invalid claim also fails
    // the step at attempt 0 and publishes one.
    if (step.attempt < 1 && step.status !== 'FAILED') continue;
    const finishedMs = timestampMs(step.finishedAt);
    if (finishedMs === undefined || finishedMs < since || step.finishedAt === undefined) continue;
    events.push({
      stepId,
      stepType: step.stepType,
      stepStatus: step.status,
      finishedAt: step.finishedAt,
    });
  }
  if (events.length === 0) return undefined;
  const decision = advance(run, options.now);
  const wouldRepublish = [
    ...new Set(
      events.flatMap(({ stepId }) =>
        Object.entries(run.steps)
          .filter(([, step]) => step.status === 'READY' && step.dependsOn.includes(stepId))
          .map(([id]) => id),
      ),
    ),
  ].sort();
  const noop = isEmptyPatch(decision.patch);
  const summary = noop
    ? `noop: ${
        isTerminalRunStatus(run.status)
          ? `the run is ${run.status}, advancing it writes nothing`
          : 'the run is already advanced'
      }${wouldRepublish.length > 0 ? `; republishes ${wouldRepublish.join(', ')}` : ''}`
    : `advance: the run would move to ${decision.runStatus}${
        decision.newlyReady.length > 0 ? `, READY: ${decision.newlyReady.join(', ')}` : ''
      }`;
  return {
    runId: run.runId,
    runStatus: run.status,
    events,
    decision: noop ? 'noop' : 'advance',
    wouldBecomeReady: decision.newlyReady,
    wouldRepublish,
    summary,
  };
}
