import type { ArtifactStore } from '@tda/artifacts';
import type { ErrorInfo, FlowRun } from '@tda/contracts';
import type { StepCheckpointStore } from '@tda/flow-store';
import { stepArtifactUri } from '../artifact-naming';
import { DEFAULT_HARNESS_POLICY } from '../harness-policy';
import { StepBudget } from '../harness/step-budget';
import { buildStepContext, checkStepInputs } from '../harness/step-context';
import type { StepContext, StepHeartbeat } from '../step-handler';
import {
  stepTypeRegistry,
  type AnyStepTypeDescriptor,
  type StepTypeRegistry,
} from '@tda/step-types';

export interface HandlerContextOptions {
  run: FlowRun;
  stepId: string;
  artifacts: ArtifactStore;
  attempt?: number;
  /** Default: a signal that never fires. */
  signal?: AbortSignal;
  /** Default: one hour from `now`. */
  deadline?: Date;
  now?: () => Date;
  heartbeat?: StepHeartbeat;
  bucket?: string;
  prefix?: string;
  registry?: StepTypeRegistry;
  /**
   * Where ctx.checkpoint writes (an InMemoryFlowRunStore holding the run, whose step is RUNNING
   * under `owner` and `attempt`); default none: a checkpoint then throws.
   */
  checkpoints?: StepCheckpointStore;
  /** The lease owner the checkpoint's fence compares with (default 'test-worker'). */
  owner?: string;
}

/**
 * The context the harness would give a handler of `descriptor` for one step, built by the same
 * code (inputs validated against the step type's schema, upstream references checked, the
 * upstream reader): handler unit tests call `handler.execute(context)` without a store, a lease
 * or a message. When the inputs or upstream references are refused, the harness's error instead
 * (what the step would be FAILED with).
 */
export function handlerContext<D extends AnyStepTypeDescriptor>(
  descriptor: D,
  options: HandlerContextOptions,
): { ok: true; context: StepContext<D> } | { ok: false; error: ErrorInfo } {
  const { run, stepId } = options;
  const step = run.steps[stepId];
  if (step === undefined) throw new Error(`the run has no step ${stepId}`);
  const checked = checkStepInputs(descriptor, run, stepId, step);
  if (!checked.ok) return { ok: false, error: checked.error };
  const now = options.now ?? (() => new Date());
  const budget = new StepBudget({
    deadline: options.deadline ?? new Date(now().getTime() + 3_600_000),
    clock: now,
    live: new Set(),
  });
  // The budget only carries the signal and deadline here: its timers are not wanted in a test.
  void budget.stop();
  const context = buildStepContext({
    descriptor,
    run,
    stepId,
    step,
    attempt: options.attempt ?? 1,
    checked,
    budget,
    artifacts: options.artifacts,
    registry: options.registry ?? stepTypeRegistry(),
    owner: options.owner ?? 'test-worker',
    checkpoints: options.checkpoints,
    artifactUri: (suffix = DEFAULT_HARNESS_POLICY.primaryArtifactSuffix) =>
      stepArtifactUri(
        {
          bucket: options.bucket ?? DEFAULT_HARNESS_POLICY.artifactBucket,
          prefix: options.prefix ?? DEFAULT_HARNESS_POLICY.artifactPrefix,
          runId: run.runId,
          stepId,
          ...(step.timeframe === undefined ? {} : { timeframe: step.timeframe }),
        },
        suffix,
      ),
    clock: now,
  });
  // buildStepContext made the inputs and the upstream reader for `descriptor`, i.e. for D.
  const typed = context as unknown as StepContext<D>;
  return {
    ok: true,
    context: {
      ...typed,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.heartbeat === undefined ? {} : { heartbeat: options.heartbeat }),
    },
  };
}

/** handlerContext that must succeed (throws with the harness's error otherwise). */
export function requireHandlerContext<D extends AnyStepTypeDescriptor>(
  descriptor: D,
  options: HandlerContextOptions,
): StepContext<D> {
  const built = handlerContext(descriptor, options);
  if (!built.ok) throw new Error(`inputs refused: ${built.error.code} ${built.error.message}`);
  return built.context;
}
