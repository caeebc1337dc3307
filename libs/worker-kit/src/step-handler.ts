import type { ArtifactStore } from '@tda/artifacts';
import type { ErrorCode, FlowRun, FlowStep, ValidationResult } from '@tda/contracts';
import type {
  AnyStepTypeDescriptor,
  ArtifactContract,
  CheckpointContract,
  ArtifactOf,
  UpstreamDeclaration,
} from '@tda/step-types';

/**
 * The contract between the step harness (worker-kit) and one step type's business logic. A
 * worker service registers exactly one handler per step type; the harness owns everything else:
 * message validation, the executable check, claim with lease, validating the inputs against the
 * step type's inputs schema, resolving and validating upstream artifacts, heartbeats, deadlines,
 * create-only artifact writes, finalize, step events and the ack/nack decision. A handler holds
 * only domain logic (and the domain checks a schema cannot express).
 */
export interface StepHandler<D extends AnyStepTypeDescriptor = AnyStepTypeDescriptor> {
  readonly descriptor: D;

  /**
   * Does the work and returns the artifacts to write. Must honour `context.signal` (abort on
   * cancel, lease loss or deadline) and never write artifacts itself: the harness writes them
   * create-only at the deterministic names from `context.artifactUri(...)`. Throw a TdaError
   * (StepError, StepInputError, or any library's coded error) for a decided failure.
   */
  execute(context: StepContext<D>): Promise<StepResult>;

  /**
   * Optional split-brain recovery (seed 002): a previous attempt wrote the primary artifact and
   * crashed before the finalize. The harness has already read it, validated it against the step
   * type's artifact contract and checked it belongs to this run and step; return the result to
   * finalize with (outputs, execution, failure), or null to execute normally. Without it the
   * step is finalized from the artifact alone.
   */
  recover?(
    existing: ExistingArtifact<ArtifactOfDescriptor<D>>,
    context: StepContext<D>,
  ): Promise<StepResult | null>;
}

/**
 * A handler of whichever step type, as the harness, the registries and the worker definitions
 * hold it: its descriptor says which. Every `StepHandler<D>` is one (`never` parameters accept
 * any typed method); the harness calls it through `callExecute` / `callRecover`, with a context
 * it built for that very descriptor.
 */
export interface AnyStepHandler {
  readonly descriptor: AnyStepTypeDescriptor;
  execute(context: never): Promise<StepResult>;
  recover?(existing: never, context: never): Promise<StepResult | null>;
}

/** handler.execute with the context the harness built from handler.descriptor. */
export function callExecute(handler: AnyStepHandler, context: StepContext): Promise<StepResult> {
  // The context's inputs and upstream reader were made for handler.descriptor (buildStepContext).
  return handler.execute(context as never);
}

/** handler.recover (when it has one) with the validated artifact and a context as above. */
export function callRecover(
  handler: AnyStepHandler,
  existing: ExistingArtifact<unknown>,
  context: StepContext,
): Promise<StepResult | null> | undefined {
  // The artifact passed handler.descriptor's artifact contract; the context is as in callExecute.
  return handler.recover?.(existing as never, context as never);
}

/** The primary artifact type of a descriptor. */
export type ArtifactOfDescriptor<D extends AnyStepTypeDescriptor> =
  D['artifact'] extends ArtifactContract<infer A> ? A : unknown;

/** The checkpoint type of a descriptor (never when it declares none). */
export type CheckpointOf<D extends AnyStepTypeDescriptor> = D['checkpoint'] extends
  CheckpointContract<infer C> | undefined
  ? C
  : never;

/** The inputs type of a descriptor: what its inputs validator returns. */
export type InputsOf<D extends AnyStepTypeDescriptor> = D['inputs'] extends (
  data: unknown,
) => ValidationResult<infer I>
  ? I
  : never;

/** An artifact the harness read and validated (the upstream of a step, or its own on recovery). */
export interface ExistingArtifact<A> {
  uri: string;
  artifact: A;
  /** The bytes as stored (what an LLM prompt quotes). */
  bytes: Buffer;
}

/** An upstream step's primary artifact, typed by the upstream step type's artifact contract. */
export interface UpstreamArtifact<A> extends ExistingArtifact<A> {
  stepId: string;
  /** The run that executed the step: this run, or for a step a rerun reused, the source run. */
  producedBy: string;
}

type UpstreamValue<U extends UpstreamDeclaration> = U extends { many: true }
  ? UpstreamArtifact<ArtifactOf<U['stepType']>>[]
  : U extends { optional: true }
    ? UpstreamArtifact<ArtifactOf<U['stepType']>> | undefined
    : UpstreamArtifact<ArtifactOf<U['stepType']>>;

/** What `ctx.upstream(name)` resolves to, per declared upstream of the descriptor. */
export type UpstreamValues<D extends AnyStepTypeDescriptor> = {
  [K in keyof D['upstream']]: UpstreamValue<D['upstream'][K]>;
};

export interface StepHeartbeat {
  /** Extends the lease and records progress (coalesced: at most one write per heartbeat period). */
  (progress?: { stage: string; processedUnits?: number; totalUnits?: number }): void;
}

export interface StepContext<D extends AnyStepTypeDescriptor = AnyStepTypeDescriptor> {
  run: FlowRun;
  stepId: string;
  step: FlowStep;
  /** `steps.<id>.inputs`, validated against the step type's inputs schema. */
  inputs: InputsOf<D>;
  /** 1 for the first claim. */
  attempt: number;
  /** Fires on cancel, lease loss or deadline; `signal.reason` is a StepAbortReason. */
  signal: AbortSignal;
  /** When the harness will abort the handler (step timeout). */
  deadline: Date;
  heartbeat: StepHeartbeat;
  /**
   * The artifact of a declared upstream (descriptor.upstream[name]): read, parsed, validated
   * against its step type's contract and checked to belong to its producing run. A missing or
   * invalid artifact is INVALID_STEP_INPUTS; storage trouble is a retryable error. An `optional`
   * upstream the inputs do not name resolves to undefined.
   */
  upstream<K extends keyof UpstreamValues<D> & string>(name: K): Promise<UpstreamValues<D>[K]>;
  /** Read-only access to further artifacts (e.g. the PNGs a charts manifest lists). */
  artifacts: Pick<ArtifactStore, 'read' | 'exists'>;
  /** Deterministic artifact name: `<prefix>/<runId>/<timeframe>/<stepId><suffix>` (seed 002). */
  artifactUri(suffix?: string): string;
  /**
   * Writes the step's checkpoint (the descriptor's `checkpoint` contract, e.g. a backtest's
   * best-so-far) beside the run document, fenced by this claim's lease: 'lease_lost' means nothing
   * was written and the step is being aborted (signal reason lease_lost). Throws a retryable
   * store error when the store is unreachable (the handler decides whether that matters).
   */
  checkpoint(data: CheckpointOf<D>): Promise<'written' | 'lease_lost'>;
  now(): Date;
}

export interface StepArtifact {
  uri: string;
  data: Buffer;
  contentType: string;
}

export interface StepResult {
  /**
   * Artifacts to write create-only, in order. The primary artifact (whose URI becomes
   * outputs.gcs_uri) is written LAST, so that its existence means every other artifact exists
   * (the recovery check relies on it).
   */
  artifacts: StepArtifact[];
  /** URI of the primary artifact; must be one of `artifacts` (or already exist on recovery). */
  primaryUri: string;
  /** Extra fields merged into steps.<id>.outputs (e.g. outputsManifestGcsUri). */
  outputs?: Record<string, unknown>;
  /** Extra fields merged into steps.<id>.outputs.execution (e.g. llm metadata). */
  execution?: Record<string, unknown>;
  /**
   * A step may finish FAILED with a written artifact (seed 000 charts: manifest written for
   * diagnostics, fewer images than minImages). Absent means SUCCEEDED.
   */
  failure?: {
    code: ErrorCode;
    message: string;
    details?: Record<string, unknown>;
  };
}

export type StepAbortReason =
  { kind: 'cancelled' } | { kind: 'lease_lost' } | { kind: 'deadline' } | { kind: 'shutdown' };
