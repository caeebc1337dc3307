import { ArtifactNotFoundError, isGcsUri, type ArtifactStore } from '@tda/artifacts';
import type { FlowRun, FlowStep, ValidationIssue } from '@tda/contracts';
import { reusedFromOf } from '@tda/flow-engine';
import { StepInputError } from '../step-errors';
import type { UpstreamArtifact } from '../step-handler';
import type { AnyStepTypeDescriptor, StepTypeRegistry, UpstreamDeclaration } from '@tda/step-types';

/** One reference of a declared upstream, checked against the run document. */
interface UpstreamRef {
  field: string;
  stepId: string;
  step: FlowStep;
  uri: string;
  /** The artifact must say this step's timeframe too. */
  sameTimeframe: boolean;
}

function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path || '/'} ${i.message}`)
    .join('; ');
}

function refsOf(
  inputs: unknown,
  declaration: UpstreamDeclaration,
): { field: string; id: unknown }[] {
  const raw =
    typeof inputs === 'object' && inputs !== null
      ? (inputs as Record<string, unknown>)[declaration.field]
      : undefined;
  if (declaration.many !== true)
    return raw === undefined ? [] : [{ field: declaration.field, id: raw }];
  const list = Array.isArray(raw) ? (raw as unknown[]) : [];
  return list.map((id, index) => ({ field: `${declaration.field}[${index}]`, id }));
}

/**
 * The document-level rules of every declared upstream reference (they used to be written once per
 * handler): the step exists, has the declared step type, is a dependency of this step, SUCCEEDED
 * with a gs:// artifact, is not this step nor named twice, and shares this step's timeframe when
 * declared so. flow-engine already decided the dependencies SUCCEEDED; what is left here is what
 * the inputs say about them. Throws StepInputError (INVALID_STEP_INPUTS) naming the field.
 */
export function resolveUpstreamRefs(
  descriptor: AnyStepTypeDescriptor,
  run: FlowRun,
  stepId: string,
  step: FlowStep,
  inputs: unknown,
): Map<string, UpstreamRef[]> {
  const resolved = new Map<string, UpstreamRef[]>();
  for (const [name, declaration] of Object.entries(descriptor.upstream)) {
    const seen = new Set<string>();
    const refs = refsOf(inputs, declaration).map(({ field, id }) => {
      const ref = checkRef(run, stepId, step, declaration, field, id);
      if (seen.has(ref.stepId)) {
        throw new StepInputError(`inputs.${field} '${ref.stepId}' is named twice`, {
          field,
          stepId: ref.stepId,
        });
      }
      seen.add(ref.stepId);
      return ref;
    });
    resolved.set(name, refs);
  }
  return resolved;
}

function checkRef(
  run: FlowRun,
  stepId: string,
  step: FlowStep,
  declaration: UpstreamDeclaration,
  field: string,
  id: unknown,
): UpstreamRef {
  const fail = (message: string, details: Record<string, unknown> = {}): never => {
    throw new StepInputError(message, { field, ...details });
  };
  if (typeof id !== 'string' || id === '') return fail(`inputs.${field} must be a stepId`);
  const upstream = Object.hasOwn(run.steps, id) ? run.steps[id] : undefined;
  if (upstream === undefined) return fail(`inputs.${field} '${id}' is not a step of this run`);
  if (id === stepId) return fail(`inputs.${field} names this step itself`, { stepId: id });
  if (upstream.stepType !== declaration.stepType) {
    return fail(
      `inputs.${field} '${id}' is a ${upstream.stepType} step, not ${declaration.stepType}`,
      {
        stepId: id,
        stepType: upstream.stepType,
      },
    );
  }
  if (!step.dependsOn.includes(id))
    return fail(`inputs.${field} '${id}' is not in dependsOn`, { stepId: id });
  if (upstream.status !== 'SUCCEEDED') {
    return fail(`upstream step '${id}' is ${upstream.status}, not SUCCEEDED`, {
      stepId: id,
      status: upstream.status,
    });
  }
  if (declaration.sameTimeframe === true && differ(upstream.timeframe, step.timeframe)) {
    return fail(
      `inputs.${field} '${id}' has timeframe ${upstream.timeframe}, this step ${step.timeframe}`,
      {
        stepId: id,
      },
    );
  }
  const uri = upstream.outputs.gcs_uri;
  if (!isGcsUri(uri))
    return fail(`upstream step '${id}' has no valid outputs.gcs_uri`, { stepId: id });
  return {
    field,
    stepId: id,
    step: upstream,
    uri,
    sameTimeframe: declaration.sameTimeframe === true,
  };
}

function differ(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a !== b;
}

/**
 * Reads declared upstream artifacts for `ctx.upstream(name)`: read, JSON-parse, validate against
 * the upstream step type's artifact contract (and its extra check), and check that the artifact
 * belongs to the run and step that produced it (a rerun's reused step: the source run). Each
 * upstream is read once per execution (a failed read again on the next call). A single upstream
 * the inputs do not name is undefined when declared `optional`, INVALID_STEP_INPUTS otherwise.
 */
export class UpstreamReader {
  private readonly cache = new Map<string, Promise<UpstreamArtifact<unknown>[]>>();

  constructor(
    private readonly artifacts: Pick<ArtifactStore, 'read'>,
    private readonly registry: StepTypeRegistry,
    private readonly run: FlowRun,
    private readonly step: FlowStep,
    private readonly refs: Map<string, UpstreamRef[]>,
  ) {}

  async read(
    name: string,
    many: boolean,
    optional = false,
  ): Promise<UpstreamArtifact<unknown>[] | UpstreamArtifact<unknown> | undefined> {
    const refs = this.refs.get(name);
    if (refs === undefined)
      throw new StepInputError(`'${name}' is not a declared upstream`, { upstream: name });
    let pending = this.cache.get(name);
    if (pending === undefined) {
      pending = Promise.all(refs.map((ref) => this.load(ref)));
      this.cache.set(name, pending);
      // A failed read is not kept: an in-process retry of the handler reads again.
      pending.catch(() => this.cache.delete(name));
    }
    const loaded = await pending;
    if (many) return loaded;
    const [first] = loaded;
    if (first === undefined && !optional)
      throw new StepInputError(`the inputs name no '${name}' step`, { upstream: name });
    return first;
  }

  private async load(ref: UpstreamRef): Promise<UpstreamArtifact<unknown>> {
    const what = `${ref.step.stepType} artifact of '${ref.stepId}'`;
    const details = { field: ref.field, stepId: ref.stepId, uri: ref.uri };
    let bytes: Buffer;
    try {
      bytes = await this.artifacts.read(ref.uri);
    } catch (error) {
      if (error instanceof ArtifactNotFoundError) {
        throw new StepInputError(`${what} does not exist: ${ref.uri}`, details);
      }
      throw error; // storage trouble: retryable, the harness decides
    }
    const artifact = this.validate(ref, parseJson(bytes, `${what} is not JSON`, details), details);
    return {
      stepId: ref.stepId,
      uri: ref.uri,
      bytes,
      artifact,
      producedBy: this.producer(ref).runId,
    };
  }

  private validate(ref: UpstreamRef, parsed: unknown, details: Record<string, unknown>): unknown {
    const contract = this.registry.find(ref.step.stepType)?.artifact;
    if (contract === undefined) return parsed; // a step type without a worker has no contract yet
    const checked = contract.validate(parsed);
    if (!checked.ok) {
      throw new StepInputError(
        `${ref.stepId}'s artifact violates ${contract.contract}.schema.json: ${describeIssues(checked.issues)}`,
        { ...details, issues: checked.issues.slice(0, 5) },
      );
    }
    const identity = contract.identity(checked.value);
    const producer = this.producer(ref);
    const problem =
      identity.runId !== producer.runId
        ? `belongs to run ${identity.runId}`
        : identity.stepId !== producer.stepId
          ? `belongs to step ${identity.stepId}`
          : ref.sameTimeframe && differ(identity.timeframe, this.step.timeframe)
            ? `has timeframe ${identity.timeframe}, this step ${this.step.timeframe}`
            : contract.check?.(checked.value);
    if (problem !== undefined)
      throw new StepInputError(`${ref.stepId}'s artifact ${problem}`, details);
    return checked.value;
  }

  /** The run and step that executed `ref` (a rerun's reused step: its source). */
  private producer(ref: UpstreamRef): { runId: string; stepId: string } {
    const reused = reusedFromOf(ref.step);
    return reused === undefined
      ? { runId: this.run.runId, stepId: ref.stepId }
      : { runId: reused.runId, stepId: reused.stepId };
  }
}

function parseJson(bytes: Buffer, message: string, details: Record<string, unknown>): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new StepInputError(message, details);
  }
}
