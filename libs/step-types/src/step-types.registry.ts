import type { StepType } from '@tda/contracts';
import { BACKTEST_STEP } from './backtest.step-type';
import { ACCOUNT_EXPORT_STEP } from './account-export.step-type';
import { CHART_EXPORT_STEP } from './chart-export.step-type';
import { INDICATORS_ON_DEMAND_STEP } from './indicators-on-demand.step-type';
import { LLM_RECOMMENDATION_STEP } from './llm-recommendation.step-type';
import { LLM_REPORT_STEP } from './llm-report.step-type';
import { NEWS_EXPORT_STEP } from './news-export.step-type';
import { OHLCV_EXPORT_STEP } from './ohlcv-export.step-type';
import type { AnyStepTypeDescriptor, ArtifactContract } from './step-type.descriptor';

/**
 * Every step type that has a worker, in pipeline order. Registering a step type is adding its
 * descriptor here (libs/worker-kit/README.md "Add a step type in six steps").
 */
export const STEP_TYPE_DESCRIPTORS = [
  OHLCV_EXPORT_STEP,
  CHART_EXPORT_STEP,
  LLM_REPORT_STEP,
  LLM_RECOMMENDATION_STEP,
  ACCOUNT_EXPORT_STEP,
  INDICATORS_ON_DEMAND_STEP,
  NEWS_EXPORT_STEP,
  BACKTEST_STEP,
] as const;

type Registered = (typeof STEP_TYPE_DESCRIPTORS)[number];

/** The step types with a worker. */
export type WorkerStepType = Registered['stepType'];

/** The primary artifact type of a registered step type (unknown for the others). */
export type ArtifactOf<S extends StepType> =
  Extract<Registered, { stepType: S }> extends { artifact: ArtifactContract<infer A> }
    ? A
    : unknown;

/** The descriptors as the harness looks them up (upstream artifacts, recovery). */
export interface StepTypeRegistry {
  find(stepType: string): AnyStepTypeDescriptor | undefined;
}

export function stepTypeRegistry(
  descriptors: readonly AnyStepTypeDescriptor[] = STEP_TYPE_DESCRIPTORS,
): StepTypeRegistry {
  const byType = new Map<string, AnyStepTypeDescriptor>();
  for (const descriptor of descriptors) {
    if (byType.has(descriptor.stepType)) {
      throw new Error(`step type ${descriptor.stepType} is described twice`);
    }
    byType.set(descriptor.stepType, descriptor);
  }
  return { find: (stepType) => byType.get(stepType) };
}

/** The registered descriptor of a step type, or undefined when it has no worker yet. */
export function findStepType(stepType: string): AnyStepTypeDescriptor | undefined {
  return STEP_TYPE_DESCRIPTORS.find((d) => d.stepType === stepType);
}
