import type { StepInputsByType, StepType, ValidationResult } from '@tda/contracts';
import { assertStepPolicy, type StepPolicy } from '@tda/flow-engine';

/** A step type that has an inputs schema (flow_run.schema.json selects it by stepType). */
export type TypedStepType = keyof StepInputsByType;

/**
 * An upstream step this step type reads: the inputs field that names it (a stepId, or a list of
 * stepIds with `many`), the step type it must have, and whether it must share this step's
 * timeframe. The harness checks every declared reference before the handler runs (it exists, has
 * that type, is in dependsOn, SUCCEEDED with an artifact) and `ctx.upstream(name)` reads and
 * validates the artifact. `optional`: the inputs may name none (a single upstream only), and then
 * `ctx.upstream(name)` resolves to undefined instead of failing the step.
 */
export interface UpstreamDeclaration {
  readonly field: string;
  readonly stepType: StepType;
  readonly many?: boolean;
  readonly sameTimeframe?: boolean;
  readonly optional?: boolean;
}

/** Who an artifact says it belongs to (written inside it by the step that produced it). */
export interface ArtifactIdentity {
  runId: string;
  stepId: string;
  timeframe?: string;
}

/** The primary artifact of a step type: a JSON document with a contract of its own. */
export interface ArtifactContract<A> {
  /** contracts/<contract>.schema.json */
  readonly contract: string;
  validate(data: unknown): ValidationResult<A>;
  // Method syntax on purpose: a registry holds descriptors of many artifact types.
  identity(artifact: A): ArtifactIdentity;
  /** What the schema cannot say (ordering, counts); a problem is a short sanitized sentence. */
  check?(artifact: A): string | undefined;
}

/**
 * A document a long step writes beside the run while it runs (ctx.checkpoint, fenced by its
 * lease): its contract and validator.
 */
export interface CheckpointContract<C> {
  /** contracts/<contract>.schema.json */
  readonly contract: string;
  validate(data: unknown): ValidationResult<C>;
}

/** What a worker reaches besides its run documents, topics and artifacts (libs/infra wires it). */
export type WorkerNeed = 'llm' | 'exchange-account';

/**
 * How the step type's worker runs on Cloud Run (libs/infra derives manifests, IAM, skaffold and
 * the build from it). A request-driven Service fed by Pub/Sub push for steps of seconds, an
 * always-on Worker Pool pulling its subscription for long steps (push requests end at 600 s).
 */
export interface WorkerDeploySpec {
  readonly kind: 'Service' | 'WorkerPool';
  /** Why this kind (README table, manifest annotation `tda.dev/why`). */
  readonly why: string;
  readonly cpu: string;
  readonly memory: string;
  /** Service only: requests per instance and the request timeout (longest step + finalize). */
  readonly concurrency?: number;
  readonly timeoutSeconds?: number;
  /** Service: min/max instances. Worker Pool: min is the manual instance count. */
  readonly minInstances: number;
  readonly maxInstances: number;
  /** npm packages the worker loads without a static import (installed in its image). */
  readonly runtimeDependencies?: readonly string[];
  /**
   * `llm`: reaches Gemini (API key secret or Vertex AI, per environment). `exchange-account`:
   * reads the live exchange account with API credentials (Secret Manager, when the environment
   * configures one).
   */
  readonly needs?: readonly WorkerNeed[];
}

/**
 * A step type described once (issue 11): everything else derives from this — the catalogue's
 * typing (through the inputs schema), the worker bootstrap and harness policy, upstream checks,
 * the deployment model, skaffold and the build, local-stack composition, the OpenAPI document and
 * the README tables.
 */
export interface StepTypeDescriptor<
  T extends StepType = StepType,
  I = T extends TypedStepType ? StepInputsByType[T] : unknown,
  A = unknown,
  U extends Readonly<Record<string, UpstreamDeclaration>> = Readonly<
    Record<string, UpstreamDeclaration>
  >,
  C = unknown,
> {
  readonly stepType: T;
  /** The worker service (NX project, image, Cloud Run resource): `worker-<step-type>`. */
  readonly service: `worker-${string}`;
  readonly description: string;
  /** contracts/<inputs>.schema.json, the one flow_run selects for stepType. */
  readonly inputsContract: string;
  /** Its generated validator (`validate.<stepType>Inputs`): the handler's inputs type is its. */
  readonly inputs: (data: unknown) => ValidationResult<I>;
  readonly artifact: ArtifactContract<A>;
  /** Checkpoints while running (ctx.checkpoint); absent: the step type writes none. */
  readonly checkpoint?: CheckpointContract<C>;
  readonly upstream: U;
  /** Timeout, attempts, lease, heartbeat, in-process retries (seed 004 defaults unless said). */
  readonly policy: Readonly<StepPolicy>;
  readonly deploy: WorkerDeploySpec;
}

/** Any descriptor, whatever its types (registries, the harness's upstream lookups). */
export type AnyStepTypeDescriptor = StepTypeDescriptor<
  StepType,
  unknown,
  unknown,
  Readonly<Record<string, UpstreamDeclaration>>
>;

const SERVICE_NAME = /^worker-[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/**
 * Checks and freezes a descriptor. A descriptor that cannot work is a programming error found
 * when the module loads (every test imports the registry): an unusable policy, a service name
 * that is not an NX project / Cloud Run name, a Service without its request settings.
 */
export function defineStepType<
  const T extends StepType,
  I,
  A,
  const U extends Readonly<Record<string, UpstreamDeclaration>>,
  C = unknown,
>(descriptor: StepTypeDescriptor<T, I, A, U, C>): StepTypeDescriptor<T, I, A, U, C> {
  const where = `step type ${descriptor.stepType}`;
  if (!SERVICE_NAME.test(descriptor.service)) {
    throw new Error(`${where}: service '${descriptor.service}' is not worker-<kebab-case>`);
  }
  assertStepPolicy(descriptor.policy, descriptor.stepType);
  const { deploy } = descriptor;
  if (deploy.kind === 'Service' && (deploy.concurrency === undefined || !deploy.timeoutSeconds)) {
    throw new Error(`${where}: a Service needs concurrency and timeoutSeconds`);
  }
  if (deploy.minInstances > deploy.maxInstances) {
    throw new Error(`${where}: minInstances is above maxInstances`);
  }
  for (const [name, upstream] of Object.entries(descriptor.upstream)) {
    // A list may simply be empty; `optional` is for a single upstream the inputs may leave out.
    if (upstream.optional === true && upstream.many === true) {
      throw new Error(`${where}: upstream '${name}' is many and optional (a list may be empty)`);
    }
  }
  return Object.freeze(descriptor);
}
