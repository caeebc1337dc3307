import { recommendationIdFor } from '@tda/flow-engine';
import { OfflineRecommenderClient } from '@tda/llm';
import {
  accountPosition,
  jsonResponse,
  ScriptedLlmClient,
  validRecommendationOutput,
} from '@tda/llm/testing';
import { describe, expect, it } from 'vitest';
import {
  parseRecommendation,
  RECO_STEP,
  recommendationFixture,
  runRecommendationStep,
  type RecommendationStepRun,
} from './testing/llm-recommendation.fixtures';

/**
 * The LLM_RECOMMENDATION handler inside the real step harness (in-memory store, artifacts,
 * publisher): the claim, the upstream checks (the account snapshot through ACCOUNT_EXPORT's own
 * artifact contract), the artifact check before the write, finalize, the step event, recovery.
 */
const CANARY = 'CANARY-reco-harness-5d1e';

function expectNoLeak(run: RecommendationStepRun): void {
  for (const [what, serialized] of [
    ['logs', JSON.stringify(run.log.records)],
    ['store writes', JSON.stringify(run.store.recorded.map((u) => u.patch))],
    ['run document', JSON.stringify(run.stored)],
    ['step events', JSON.stringify(run.publisher.published)],
  ] as const) {
    expect(serialized.includes(CANARY), `${what} contain the canary`).toBe(false);
  }
}

describe('LLM_RECOMMENDATION through the step harness', () => {
  it('finalizes SUCCEEDED with the file, outputs.recommendationId and the llm metadata (offline)', async () => {
    const run = await runRecommendationStep({ client: new OfflineRecommenderClient() });
    expect(run.outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    const file = parseRecommendation(run.bytes);
    expect(run.step.outputs).toMatchObject({
      gcs_uri: run.recoUri,
      recommendationId: recommendationIdFor(run.stored.runId, RECO_STEP),
      execution: {
        llm: {
          provider: 'offline',
          promptId: 'prompt_reco_v1',
          schemaId: 'llm_recommendation_output_v1',
          modelVersion: 'offline-recommender-v1',
          requests: 1,
          attempts: { total: 1 },
        },
      },
    });
    expect(file.metadata.recommendationId).toBe(run.step.outputs.recommendationId);
    expect(run.publisher.published).toHaveLength(1);
    expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
  });

  it('finalizes from an existing file without a model call (split-brain recovery)', async () => {
    const first = await runRecommendationStep({ client: new OfflineRecommenderClient() });
    const bytes = first.bytes;
    if (bytes === null) throw new Error('no file');
    const client = new ScriptedLlmClient([]);
    const run = await runRecommendationStep({
      client,
      before: async (fixture) => {
        await fixture.artifacts.put(fixture.recoUri, bytes, { contentType: 'application/json' });
      },
    });
    expect(run.stored.runId).toBe(first.stored.runId);
    expect(run.step.status).toBe('SUCCEEDED');
    expect(run.calls).toEqual({ executions: 0, recoveries: 1 });
    expect(client.calls).toBe(0);
    expect(run.step.outputs).toMatchObject({
      gcs_uri: run.recoUri,
      recommendationId: recommendationIdFor(run.stored.runId, RECO_STEP),
      execution: { llm: { provider: 'offline', modelVersion: 'offline-recommender-v1' } },
    });
  });

  it('runs without an account when the inputs name none', async () => {
    const run = await runRecommendationStep({
      client: new OfflineRecommenderClient(),
      account: null,
    });
    expect(run.step.status).toBe('SUCCEEDED');
    expect(parseRecommendation(run.bytes).metadata.riskLimits).toEqual({
      source: 'default',
      maxPositionFraction: 0.1,
    });
  });

  it('REDUCEs an open long the reports turn against (offline)', async () => {
    const bearish = { direction: 'bearish' as const, strength: 'strong' as const };
    const run = await runRecommendationStep({
      client: new OfflineRecommenderClient(),
      reports: { '1w': bearish, '1d': bearish, '4h': bearish },
      account: { positions: [accountPosition({ fractionOfEquity: 0.15 })] },
    });
    expect(run.step.status).toBe('SUCCEEDED');
    expect(parseRecommendation(run.bytes).output).toMatchObject({
      action: 'REDUCE',
      size: { fractionOfEquity: 0.15 },
    });
  });

  it('fails INVALID_STRUCTURED_OUTPUT naming the rules, with no model text anywhere', async () => {
    const fixture = await recommendationFixture();
    const bad = validRecommendationOutput(fixture.reportIds, {
      headline: CANARY,
      takeProfit: [60_000],
      rationale: {
        summary: CANARY,
        citations: [{ reportId: fixture.reportIds[0] ?? '', claim: CANARY }],
      },
    });
    const run = await runRecommendationStep({
      client: new ScriptedLlmClient([jsonResponse(bad), jsonResponse(bad)]),
    });
    expect(run.outcome).toMatchObject({ kind: 'failed', errorCode: 'INVALID_STRUCTURED_OUTPUT' });
    expect(run.step.error).toMatchObject({
      code: 'INVALID_STRUCTURED_OUTPUT',
      retryable: false,
      details: {
        reasonKind: 'invariant_violation',
        validationErrors: [
          {
            path: '/takeProfit/0',
            keyword: 'buy_targets_above_entry',
            message: 'BUY: every takeProfit must be above entry.high',
          },
        ],
      },
    });
    expect(run.step.error?.message).toContain('buy_targets_above_entry');
    expect(run.bytes).toBeNull();
    expect(run.step.outputs.recommendationId).toBeUndefined();
    expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
    expectNoLeak(run);
  });

  it('refuses an account snapshot that breaks its own artifact contract: INVALID_STEP_INPUTS', async () => {
    const client = new ScriptedLlmClient([]);
    const run = await runRecommendationStep({
      client,
      // equity no longer follows from cash and positions
      account: { equity: 1, positions: [accountPosition({ fractionOfEquity: 0.15 })] },
    });
    expect(run.step.error).toMatchObject({ code: 'INVALID_STEP_INPUTS' });
    expect(run.step.error?.message).toMatch(/^account_export's artifact /);
    expect(client.calls).toBe(0);
  });
});
