import type { FlowRun, FlowStep, StepType } from '@tda/contracts';
import type {
  StepExecutionContext,
  StepHandler,
  StepRecoveryContext,
  StepResult,
} from '../step-handler';

export type TestExecute = (context: StepExecutionContext<unknown>) => Promise<StepResult>;

/** A deterministic JSON artifact at `context.artifactUri()` (the primary) — the usual result. */
export function jsonResult(
  context: Pick<StepExecutionContext<unknown>, 'artifactUri' | 'stepId'>,
  body: Record<string, unknown> = { ok: true },
): StepResult {
  const uri = context.artifactUri();
  return {
    artifacts: [
      {
        uri,
        data: Buffer.from(JSON.stringify({ stepId: context.stepId, ...body })),
        contentType: 'application/json',
      },
    ],
    primaryUri: uri,
  };
}

/**
 * A StepHandler for harness tests: counts validateInputs/execute/recover calls, remembers the
 * signals it was given, and runs a replaceable `executeImpl` (default: one JSON artifact).
 */
export class TestStepHandler implements StepHandler {
  validations = 0;
  executions = 0;
  recoveries = 0;
  readonly signals: AbortSignal[] = [];
  executeImpl: TestExecute = async (context) => jsonResult(context);
  validateImpl: (run: FlowRun, stepId: string, step: FlowStep) => unknown = (_r, _s, step) =>
    step.inputs;
  recover?: (context: StepRecoveryContext<unknown>) => Promise<StepResult | null>;

  constructor(readonly stepType: StepType = 'OHLCV_EXPORT') {}

  validateInputs(run: FlowRun, stepId: string, step: FlowStep): unknown {
    this.validations += 1;
    return this.validateImpl(run, stepId, step);
  }

  execute(context: StepExecutionContext<unknown>): Promise<StepResult> {
    this.executions += 1;
    this.signals.push(context.signal);
    return this.executeImpl(context);
  }

  /** Installs a recover() that counts calls and delegates to `impl`. */
  withRecover(impl: (context: StepRecoveryContext<unknown>) => Promise<StepResult | null>): this {
    this.recover = (context) => {
      this.recoveries += 1;
      return impl(context);
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
