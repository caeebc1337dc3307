import { StepError, callExecute, type AnyStepHandler, type StepContext } from '@tda/worker-kit';

/**
 * What the browser tests make a step do, by its stepId: `hold` keeps it RUNNING until the run
 * is cancelled (it honours the abort signal) or `release()`; `failOnce` fails its first attempt
 * with a non-retryable error so the run FAILS and a retry succeeds.
 */
export class StepScript {
  readonly held = new Set<string>();
  private readonly failed = new Set<string>();
  private releaseAll: (() => void)[] = [];

  constructor(
    private readonly rules: {
      hold?: (stepId: string) => boolean;
      failOnce?: (stepId: string) => boolean;
    },
  ) {}

  release(): void {
    for (const release of this.releaseAll.splice(0)) release();
  }

  wrap(inner: AnyStepHandler): AnyStepHandler {
    const execute = async (context: StepContext) => {
      const key = `${context.run.runId}/${context.stepId}`;
      if (this.rules.failOnce?.(context.stepId) === true && !this.failed.has(key)) {
        this.failed.add(key);
        throw new StepError('MARKET_DATA_UNAVAILABLE', 'scripted failure (browser test)', {
          retryable: false,
        });
      }
      if (this.rules.hold?.(context.stepId) === true) {
        this.held.add(key);
        await new Promise<void>((resolve) => {
          this.releaseAll.push(resolve);
          context.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        this.held.delete(key);
      }
      return callExecute(inner, context);
    };
    return {
      descriptor: inner.descriptor,
      execute,
      ...(inner.recover === undefined ? {} : { recover: inner.recover.bind(inner) }),
    };
  }
}
