import { performance } from 'node:perf_hooks';
import { validate, type AccountExportInputs, type ValidationResult } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from '@tda/step-types';
import {
  defineWorker,
  workerServiceConfigSchema,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';

/** What a no-op step writes: who it belongs to, nothing else. */
export interface NoopArtifact {
  runId: string;
  stepId: string;
}

function isNoopArtifact(value: unknown): value is NoopArtifact {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record['runId'] === 'string' && typeof record['stepId'] === 'string';
}

/**
 * The bench's no-op step type, registered through the public descriptor like any step type: the
 * harness claims, leases, writes its artifact create-only and finalizes exactly as for a real one.
 * The StepType enum is closed in contracts (every message and run document is validated against
 * it), so on the wire it borrows ACCOUNT_EXPORT and its inputs contract; the bench runs on a
 * project and topic prefix of its own, where no other worker listens.
 */
export const noopStepType = defineStepType({
  stepType: 'ACCOUNT_EXPORT',
  service: 'worker-bench-noop',
  description: 'bench only: does nothing and writes {runId, stepId}',
  inputsContract: 'account_export_inputs',
  inputs: validate.accountExportInputs,
  artifact: {
    contract: 'bench_noop_artifact',
    validate: (data): ValidationResult<NoopArtifact> =>
      isNoopArtifact(data)
        ? { ok: true, value: data }
        : { ok: false, issues: [{ path: '/', message: 'not a no-op artifact', keyword: 'type' }] },
    identity: (artifact) => ({ runId: artifact.runId, stepId: artifact.stepId }),
  },
  upstream: {},
  policy: DEFAULT_STEP_POLICY,
  deploy: {
    kind: 'Service',
    why: 'bench only, never deployed',
    cpu: '1',
    memory: '256Mi',
    concurrency: 10,
    timeoutSeconds: 60,
    minInstances: 0,
    maxInstances: 1,
  },
});

/** The inputs a bench flow gives every no-op step (valid ACCOUNT_EXPORT inputs). */
export const NOOP_INPUTS: AccountExportInputs = { accountId: 'bench' };

/** When each step's handler was entered and left (performance.now(), this process). */
export interface HandlerTimes {
  entered: number;
  done: number;
}

/** `runId\u0000stepId` → handler times: the worker end of the dispatch and advance hops. */
export class HandlerClock {
  readonly times = new Map<string, HandlerTimes>();

  static key(runId: string, stepId: string): string {
    return `${runId}\u0000${stepId}`;
  }

  record(runId: string, stepId: string, times: HandlerTimes): void {
    this.times.set(HandlerClock.key(runId, stepId), times);
  }

  clear(): void {
    this.times.clear();
  }
}

type NoopContext = StepContext<typeof noopStepType>;

/** Returns its artifact at once; only notes when it was entered and left. */
export class NoopStepHandler implements StepHandler<typeof noopStepType> {
  readonly descriptor = noopStepType;

  constructor(private readonly clock: HandlerClock) {}

  execute(context: NoopContext): Promise<StepResult> {
    const entered = performance.now();
    const uri = context.artifactUri();
    const artifact: NoopArtifact = { runId: context.run.runId, stepId: context.stepId };
    const result: StepResult = {
      artifacts: [
        { uri, data: Buffer.from(JSON.stringify(artifact)), contentType: 'application/json' },
      ],
      primaryUri: uri,
    };
    this.clock.record(context.run.runId, context.stepId, { entered, done: performance.now() });
    return Promise.resolve(result);
  }
}

/** The no-op worker service: the shared worker env, the no-op handler noting into `clock`. */
export function noopWorker(clock: HandlerClock) {
  return defineWorker({
    descriptor: noopStepType,
    configSchema: workerServiceConfigSchema,
    create: () => ({ handler: new NoopStepHandler(clock) }),
  });
}
