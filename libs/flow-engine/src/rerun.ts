import {
  validate,
  type FlowRun,
  type FlowStep,
  type RunTrigger,
  type StepStatus,
} from '@tda/contracts';
import { downstreamOf } from './dag';
import { FlowRunInvalidError } from './errors';
import { isStorageSafeStepId, isValidRunId } from './ids';
import { sortedSteps } from './patch';
import { computeProgress } from './run-status';
import { hasStep, stepOf } from './step-lookup';
import { addMs, toTimestamp } from './time';

/** `outputs.execution.reusedFrom` of a step a rerun copied instead of executing. */
export interface ReusedFrom {
  /** The run that produced the artifact (its runId is the one inside the artifact). */
  runId: string;
  stepId: string;
  /** The run the rerun was made from (differs from runId for a rerun of a rerun). */
  sourceRunId: string;
}

/** The link from a rerun to its source, in `trigger.rerunOf`. */
export interface RerunOf {
  runId: string;
  fromStepId: string;
}

export const RERUN_TRIGGER_SOURCE = 'orchestrator-rerun';

export interface RerunOptions {
  fromStepId: string;
  /** The new run's id (generateRunId with the source's symbol). */
  runId: string;
  now: Date;
  /** Run deadline of the new run, from now. Undefined: no deadline. */
  deadlineMs?: number;
  /** Default `{type: 'SYSTEM', source: 'orchestrator-rerun', rerunOf: {runId, fromStepId}}`. */
  trigger?: RunTrigger;
}

export type RerunDecision =
  | {
      kind: 'rerun';
      /** The new run, PENDING, contract-valid: create it create-only, then advance it. */
      run: FlowRun;
      /** Steps copied SUCCEEDED from the source (their artifacts are reused, not re-executed). */
      reused: string[];
      /** fromStepId and everything downstream of it: PENDING in the new run. */
      rerun: string[];
      /** SKIPPED steps carried over as SKIPPED. */
      skipped: string[];
    }
  | { kind: 'step_not_found'; stepId: string }
  | {
      kind: 'conflict';
      /** Steps upstream of / beside fromStepId that did not SUCCEED in the source. */
      steps: { stepId: string; status: StepStatus }[];
      message: string;
    };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `reusedFrom` link of a step, when a rerun copied it from an earlier run. */
export function reusedFromOf(step: FlowStep | undefined): ReusedFrom | undefined {
  const link = step?.outputs.execution?.['reusedFrom'];
  if (!isRecord(link)) return undefined;
  const { runId, stepId, sourceRunId } = link;
  if (!isValidRunId(runId) || typeof stepId !== 'string') return undefined;
  return { runId, stepId, sourceRunId: isValidRunId(sourceRunId) ? sourceRunId : runId };
}

/**
 * The runId an upstream step's artifact belongs to: the run that executed the step. That is
 * `run` itself, except for a step a rerun reused, whose artifact (and the runId written inside
 * it) is the producing run's. Workers check upstream artifacts against this, not against the
 * consuming run's id.
 */
export function producingRunId(run: FlowRun, stepId: string): string {
  return reusedFromOf(stepOf(run, stepId))?.runId ?? run.runId;
}

/**
 * Rerun from a step (issue 5 recovery): a NEW run of the same flow, scope and owner in which
 * `fromStepId` and everything downstream of it are PENDING (to be executed), and every other
 * step is copied SUCCEEDED from the source with the source's outputs — the same `gcs_uri`, the
 * artifacts reused, never re-executed — marked `outputs.execution.reusedFrom {runId, stepId,
 * sourceRunId}`. The step definitions (inputs, dependsOn) are the source's, so the rerun repeats
 * the same DAG even if the catalogue changed since. SKIPPED steps outside the rerun stay SKIPPED.
 *
 * Every copied step must be SUCCEEDED (or SKIPPED) in the source: otherwise there is nothing to
 * reuse (`conflict`, naming the steps). The source run's own status does not matter: a failed or
 * cancelled run can be rerun from its failed step when what precedes it succeeded.
 */
export function buildRerun(source: FlowRun, options: RerunOptions): RerunDecision {
  const { fromStepId } = options;
  if (!isStorageSafeStepId(fromStepId) || !hasStep(source, fromStepId)) {
    return { kind: 'step_not_found', stepId: fromStepId };
  }
  const rerunSet = downstreamOf(source.steps, fromStepId);
  const blocking = sortedSteps(source)
    .filter(([id, step]) => !rerunSet.has(id) && !['SUCCEEDED', 'SKIPPED'].includes(step.status))
    .map(([stepId, step]) => ({ stepId, status: step.status }));
  if (blocking.length > 0) {
    return {
      kind: 'conflict',
      steps: blocking,
      message: `cannot rerun run ${source.runId} from ${fromStepId}: ${blocking
        .map((b) => `${b.stepId} is ${b.status}`)
        .join(', ')} (every step outside the rerun must have SUCCEEDED)`,
    };
  }

  const ts = toTimestamp(options.now);
  const steps: Record<string, FlowStep> = {};
  const reused: string[] = [];
  const rerun: string[] = [];
  const skipped: string[] = [];
  for (const [id, step] of sortedSteps(source)) {
    const fresh: FlowStep = {
      stepType: step.stepType,
      status: 'PENDING',
      dependsOn: [...step.dependsOn],
      inputs: structuredClone(step.inputs),
      outputs: {},
      createdAt: ts,
      attempt: 0,
    };
    if (step.timeframe !== undefined) fresh.timeframe = step.timeframe;
    if (rerunSet.has(id)) {
      rerun.push(id);
    } else if (step.status === 'SKIPPED') {
      fresh.status = 'SKIPPED';
      fresh.finishedAt = ts;
      skipped.push(id);
    } else {
      const reusedFrom: ReusedFrom = {
        runId: producingRunId(source, id),
        stepId: id,
        sourceRunId: source.runId,
      };
      const outputs = structuredClone(step.outputs);
      fresh.status = 'SUCCEEDED';
      fresh.finishedAt = ts;
      fresh.outputs = { ...outputs, execution: { ...(outputs.execution ?? {}), reusedFrom } };
      reused.push(id);
    }
    steps[id] = fresh;
  }

  const rerunOf: RerunOf = { runId: source.runId, fromStepId };
  const run: FlowRun = {
    schemaVersion: source.schemaVersion,
    runId: options.runId,
    flowKey: source.flowKey,
    status: 'PENDING',
    createdAt: ts,
    updatedAt: ts,
    trigger: options.trigger ?? { type: 'SYSTEM', source: RERUN_TRIGGER_SOURCE, rerunOf },
    scope: structuredClone(source.scope),
    ownerId: source.ownerId,
    steps,
  };
  if (options.deadlineMs !== undefined) run.deadlineAt = addMs(options.now, options.deadlineMs);
  run.progress = computeProgress(run);
  const checked = validate.flowRun(run);
  if (!checked.ok) {
    throw new FlowRunInvalidError(`the rerun of ${source.runId} violates the flow_run contract`, {
      runId: options.runId,
      sourceRunId: source.runId,
      issues: checked.issues.slice(0, 10),
    });
  }
  return { kind: 'rerun', run, reused, rerun, skipped };
}
