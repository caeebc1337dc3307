import type { StepInputsByType, ValidationResult } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import type { ExistingArtifact, StepContext, StepHandler, StepResult } from '../step-handler';
import { defineWorker, type WorkerDefinition } from '../worker-definition';
import { workerServiceConfigSchema, type WorkerServiceConfig } from '../worker-env';
import { defineStepType, type StepTypeDescriptor, type TypedStepType } from '@tda/step-types';

/** The artifact every TestStepHandler writes: who it belongs to, plus what a test adds. */
export interface TestArtifact {
  runId: string;
  stepId: string;
  [key: string]: unknown;
}

function isTestArtifact(value: unknown): value is TestArtifact {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record['runId'] === 'string' && typeof record['stepId'] === 'string';
}

export type TestStepDescriptor<T extends TypedStepType = TypedStepType> = StepTypeDescriptor<
  T,
  StepInputsByType[T],
  TestArtifact,
  Record<string, never>
>;

/**
 * A descriptor for harness tests: the given step type with permissive inputs (whatever object
 * the fixture wrote), a JSON artifact `{runId, stepId, ...}`, no upstream, seed 004's policy.
 */
export function testStepType<T extends TypedStepType>(
  stepType: T,
  options: {
    /** The step type's real inputs check instead of the permissive one (with its contract). */
    inputs?: {
      contract: string;
      validate: (data: unknown) => ValidationResult<StepInputsByType[T]>;
    };
  } = {},
): TestStepDescriptor<T> {
  return defineStepType({
    stepType,
    service: `worker-test-${stepType.toLowerCase().replaceAll('_', '-')}`,
    description: `test step type ${stepType}`,
    inputsContract: options.inputs?.contract ?? 'test_inputs',
    inputs:
      options.inputs?.validate ??
      ((data): ValidationResult<StepInputsByType[T]> =>
        typeof data === 'object' && data !== null
          ? { ok: true, value: data as StepInputsByType[T] }
          : { ok: false, issues: [{ path: '/', message: 'must be an object', keyword: 'type' }] }),
    artifact: {
      contract: 'test_artifact',
      validate: (data): ValidationResult<TestArtifact> =>
        isTestArtifact(data)
          ? { ok: true, value: data }
          : { ok: false, issues: [{ path: '/', message: 'not a test artifact', keyword: 'type' }] },
      identity: (artifact) => ({ runId: artifact.runId, stepId: artifact.stepId }),
    },
    upstream: {},
    policy: DEFAULT_STEP_POLICY,
    deploy: {
      kind: 'Service',
      why: 'tests only',
      cpu: '1',
      memory: '512Mi',
      concurrency: 1,
      timeoutSeconds: 60,
      minInstances: 0,
      maxInstances: 1,
    },
  });
}

export type TestContext = StepContext<TestStepDescriptor>;
export type TestExecute = (context: TestContext) => Promise<StepResult>;

/** A deterministic JSON artifact at `context.artifactUri()` (the primary) — the usual result. */
export function jsonResult(
  context: Pick<StepContext, 'artifactUri' | 'stepId' | 'run'>,
  body: Record<string, unknown> = { ok: true },
): StepResult {
  const uri = context.artifactUri();
  const artifact = { runId: context.run.runId, stepId: context.stepId, ...body };
  return {
    artifacts: [
      { uri, data: Buffer.from(JSON.stringify(artifact)), contentType: 'application/json' },
    ],
    primaryUri: uri,
  };
}

/**
 * A StepHandler for harness tests: counts execute/recover calls, remembers the contexts and
 * signals it was given, and runs a replaceable `executeImpl` (default: one JSON artifact).
 */
export class TestStepHandler implements StepHandler<TestStepDescriptor> {
  readonly descriptor: TestStepDescriptor;
  executions = 0;
  recoveries = 0;
  readonly signals: AbortSignal[] = [];
  readonly contexts: TestContext[] = [];
  executeImpl: TestExecute = async (context) => jsonResult(context);
  recover?: (
    existing: ExistingArtifact<TestArtifact>,
    context: TestContext,
  ) => Promise<StepResult | null>;

  constructor(stepType: TypedStepType | TestStepDescriptor = 'OHLCV_EXPORT') {
    this.descriptor = typeof stepType === 'string' ? testStepType(stepType) : stepType;
  }

  execute(context: TestContext): Promise<StepResult> {
    this.executions += 1;
    this.signals.push(context.signal);
    this.contexts.push(context);
    return this.executeImpl(context);
  }

  /** Installs a recover() that counts calls and delegates to `impl`. */
  withRecover(
    impl: (
      existing: ExistingArtifact<TestArtifact>,
      context: TestContext,
    ) => Promise<StepResult | null>,
  ): this {
    this.recover = (existing, context) => {
      this.recoveries += 1;
      return impl(existing, context);
    };
    return this;
  }
}

/** Resolves when `signal` aborts (a handler that honours its signal and never finishes). */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = (): void => reject(new Error('aborted'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/**
 * A worker definition around a TestStepHandler (the shared worker env as its config): what
 * bootstrapWorker / composeWorker tests boot. The handler's descriptor is the definition's.
 */
export function testWorker(
  handler: TestStepHandler = new TestStepHandler(),
): WorkerDefinition<WorkerServiceConfig, TestStepHandler> {
  return defineWorker({
    descriptor: handler.descriptor,
    configSchema: workerServiceConfigSchema,
    create: () => ({ handler }),
  });
}
