import type { ArtifactStore } from '@tda/artifacts';
import { isTdaError, type ErrorInfo, type FlowRun, type FlowStep } from '@tda/contracts';
import { errorInfo, holdsStepLease } from '@tda/flow-engine';
import type { StepCheckpointStore } from '@tda/flow-store';
import { StepError } from '../step-errors';
import type { StepContext } from '../step-handler';
import type { AnyStepTypeDescriptor, StepTypeRegistry } from '@tda/step-types';
import type { StepBudget } from './step-budget';
import { resolveUpstreamRefs, UpstreamReader } from './upstream';

/** Issues of an inputs validation put in an error: paths, messages and keywords, at most 10. */
const MAX_ISSUES = 10;

/**
 * `steps.<id>.inputs` against the step type's inputs schema, then the declared upstream
 * references against the run document. Problems are INVALID_STEP_INPUTS naming the schema path
 * (or the field): the step fails, never the worker.
 */
export function checkStepInputs(
  descriptor: AnyStepTypeDescriptor,
  run: FlowRun,
  stepId: string,
  step: FlowStep,
):
  | { ok: true; inputs: unknown; upstream: ReturnType<typeof resolveUpstreamRefs> }
  | { ok: false; error: ErrorInfo; cause?: unknown } {
  const checked = descriptor.inputs(step.inputs);
  if (!checked.ok) {
    const issues = checked.issues.slice(0, MAX_ISSUES);
    const first = issues[0];
    return {
      ok: false,
      error: errorInfo(
        'INVALID_STEP_INPUTS',
        `inputs of ${stepId} violate ${descriptor.inputsContract}.schema.json${
          first === undefined ? '' : `: ${first.path} ${first.message}`
        }`,
        { contract: descriptor.inputsContract, issues },
      ),
    };
  }
  try {
    return {
      ok: true,
      inputs: checked.value,
      upstream: resolveUpstreamRefs(descriptor, run, stepId, step, checked.value),
    };
  } catch (error) {
    if (isTdaError(error)) return { ok: false, error: error.toErrorInfo(), cause: error };
    throw error;
  }
}

export interface StepContextParts {
  descriptor: AnyStepTypeDescriptor;
  run: FlowRun;
  stepId: string;
  step: FlowStep;
  attempt: number;
  checked: { inputs: unknown; upstream: ReturnType<typeof resolveUpstreamRefs> };
  budget: StepBudget;
  artifacts: Pick<ArtifactStore, 'read' | 'exists'>;
  registry: StepTypeRegistry;
  /** The lease owner (this harness): the checkpoint's fence with `attempt`. */
  owner: string;
  checkpoints: StepCheckpointStore | undefined;
  artifactUri: (suffix?: string) => string;
  clock: () => Date;
}

/**
 * ctx.checkpoint: the document is validated against the step type's checkpoint contract (a bad
 * one is our bug: INTERNAL_ERROR) and written beside the run only while this claim holds the
 * lease; a refused write means the lease is gone, so the step aborts with lease_lost.
 */
function checkpointWriter(parts: StepContextParts): StepContext['checkpoint'] {
  const { descriptor, run, stepId, attempt, owner, checkpoints, budget } = parts;
  return async (data) => {
    const contract = descriptor.checkpoint;
    if (contract === undefined || checkpoints === undefined) {
      throw new StepError('INTERNAL_ERROR', `${descriptor.stepType} has no checkpoint store here`);
    }
    const checked = contract.validate(data);
    if (!checked.ok) {
      throw new StepError(
        'INTERNAL_ERROR',
        `checkpoint violates ${contract.contract}.schema.json`,
        {
          details: { issues: checked.issues.slice(0, MAX_ISSUES) },
        },
      );
    }
    const guard = (stored: FlowRun) =>
      holdsStepLease(stored, stepId, { owner, attempt, now: parts.clock() });
    // A validated checkpoint is a JSON object (every checkpoint contract is an object schema).
    const doc = checked.value as Record<string, unknown>;
    const outcome = await checkpoints.writeCheckpoint(run.runId, stepId, doc, guard);
    if (outcome === 'written') return 'written';
    budget.loseLease({ reason: 'checkpoint_refused' });
    return 'lease_lost';
  };
}

/** What the handler receives: the typed inputs, the upstream reader, the budget's signal. */
export function buildStepContext(parts: StepContextParts): StepContext {
  const { descriptor, run, step, artifacts } = parts;
  const reader = new UpstreamReader(artifacts, parts.registry, run, step, parts.checked.upstream);
  return {
    run,
    stepId: parts.stepId,
    step,
    inputs: parts.checked.inputs as StepContext['inputs'],
    attempt: parts.attempt,
    signal: parts.budget.signal,
    deadline: parts.budget.deadline,
    heartbeat: parts.budget.heartbeat,
    upstream: ((name: string) => {
      const declared = descriptor.upstream[name];
      return reader.read(name, declared?.many === true, declared?.optional === true);
    }) as StepContext['upstream'],
    artifacts: {
      read: (uri) => artifacts.read(uri),
      exists: (uri) => artifacts.exists(uri),
    },
    artifactUri: parts.artifactUri,
    checkpoint: checkpointWriter(parts),
    now: () => parts.clock(),
  };
}
