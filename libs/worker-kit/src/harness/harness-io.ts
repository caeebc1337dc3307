import type { ArtifactStore } from '@tda/artifacts';
import type { Timeframe } from '@tda/contracts';
import type { StepCheckpointStore } from '@tda/flow-store';
import type { StepTypeRegistry } from '@tda/step-types';
import type { ArtifactWriterOptions } from '../artifact-writer';
import type { AnyStepHandler } from '../step-handler';
import type { StepBudget } from './step-budget';
import type { StepTarget } from './step-end';

/** What recovery and execution share: the handler, the adapters, naming, the writer's retries. */
export interface HarnessIo {
  handler: AnyStepHandler;
  artifacts: ArtifactStore;
  /** The step types whose upstream artifacts the context reads and validates. */
  registry: StepTypeRegistry;
  owner: string;
  /** Where ctx.checkpoint writes (absent: the step type cannot checkpoint in this worker). */
  checkpoints: StepCheckpointStore | undefined;
  clock: () => Date;
  /** The budgets of running handlers and recoveries (aborted on shutdown). */
  live: Set<StepBudget>;
  /** The deterministic artifact names of one step: `(suffix?) => gs://...`. */
  artifactUri: (
    target: StepTarget,
    timeframe: Timeframe | undefined,
  ) => (suffix?: string) => string;
  writer: Omit<ArtifactWriterOptions, 'signal'>;
}
