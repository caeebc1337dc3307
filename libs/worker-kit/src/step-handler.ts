import type { FlowRun, FlowStep, StepType } from '@tda/contracts';
import type { ArtifactStore } from '@tda/artifacts';

/**
 * The contract between the step harness (worker-kit) and one step type's business logic. A
 * worker service registers exactly one handler per stepType it serves; the harness owns
 * everything else: message validation, the executable check, claim with lease, heartbeats,
 * deadlines, create-only artifact writes, finalize, step events and the ack/nack decision.
 */
export interface StepHandler<Inputs = unknown> {
  readonly stepType: StepType;

  /**
   * Validates and normalises `steps.<stepId>.inputs` (and anything else of the run this step
   * reads, e.g. upstream outputs.gcs_uri). Throw StepInputError (INVALID_STEP_INPUTS, details
   * naming the problem) for bad inputs: the harness then finalizes the step FAILED, non-retryable.
   */
  validateInputs(run: FlowRun, stepId: string, step: FlowStep): Inputs;

  /**
   * Does the work and returns the artifacts to write. Must honour `context.signal` (abort on
   * cancel, lease loss or deadline) and never write artifacts itself: the harness writes them
   * create-only at the deterministic names from `context.artifactUri(...)`.
   */
  execute(context: StepExecutionContext<Inputs>): Promise<StepResult>;

  /**
   * Optional split-brain recovery (seed 002): the step is RUNNING (a previous attempt crashed
   * after writing its artifact) and the primary artifact exists. Return the result to finalize
   * with, reading the existing artifact, or null to execute normally.
   */
  recover?(context: StepRecoveryContext<Inputs>): Promise<StepResult | null>;
}

export interface StepHeartbeat {
  /** Extends the lease and records progress (coalesced: at most one write per heartbeat period). */
  (progress?: { stage: string; processedUnits?: number; totalUnits?: number }): void;
}

export interface StepExecutionContext<Inputs> {
  run: FlowRun;
  stepId: string;
  step: FlowStep;
  inputs: Inputs;
  /** 1 for the first claim. */
  attempt: number;
  /** Fires on cancel, lease loss or deadline; `signal.reason` is a StepAbortReason. */
  signal: AbortSignal;
  /** When the harness will abort the handler (step timeout). */
  deadline: Date;
  heartbeat: StepHeartbeat;
  /** Read-only access to upstream artifacts. */
  artifacts: Pick<ArtifactStore, 'read' | 'exists'>;
  /** Deterministic artifact name: `<prefix>/<runId>/<timeframe>/<stepId><suffix>` (seed 002). */
  artifactUri(suffix?: string): string;
  now(): Date;
}

export type StepRecoveryContext<Inputs> = StepExecutionContext<Inputs> & {
  /** The primary artifact URI that was found to exist. */
  existingUri: string;
};

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
    code: import('@tda/contracts').ErrorCode;
    message: string;
    details?: Record<string, unknown>;
  };
}

export type StepAbortReason =
  { kind: 'cancelled' } | { kind: 'lease_lost' } | { kind: 'deadline' } | { kind: 'shutdown' };
