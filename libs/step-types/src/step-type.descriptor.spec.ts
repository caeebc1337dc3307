import { describe, expect, it } from 'vitest';
import { LLM_RECOMMENDATION_STEP } from './llm-recommendation.step-type';
import { defineStepType } from './step-type.descriptor';

describe('defineStepType: upstream declarations', () => {
  it('refuses an upstream that is both many and optional (a list may simply be empty)', () => {
    expect(() =>
      defineStepType({
        ...LLM_RECOMMENDATION_STEP,
        upstream: {
          reports: { field: 'reportStepIds', stepType: 'LLM_REPORT', many: true, optional: true },
        },
      }),
    ).toThrow(
      "step type LLM_RECOMMENDATION: upstream 'reports' is many and optional (a list may be empty)",
    );
  });

  it('accepts an optional single upstream', () => {
    expect(LLM_RECOMMENDATION_STEP.upstream.account.optional).toBe(true);
  });
});
