import { createHash } from 'node:crypto';
import { validate, type FlowRun, type LlmRecommendationFile } from '@tda/contracts';
import { recommendationIdFor } from '@tda/flow-engine';
import {
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  InMemoryPromptRegistry,
  LlmStepRuntime,
  OfflineRecommenderClient,
  type LlmClient,
} from '@tda/llm';
import {
  accountPosition,
  jsonResponse,
  RECO_AS_OF,
  RECO_LAST_CLOSE,
  ScriptedLlmClient,
  validRecommendationOutput,
} from '@tda/llm/testing';
import { LLM_RECOMMENDATION_STEP } from '@tda/step-types';
import { rejectionOf } from '@tda/test-support';
import { StepError, StepInputError } from '@tda/worker-kit';
import { requireHandlerContext } from '@tda/worker-kit/testing';
import { describe, expect, it } from 'vitest';
import { executionMetadataOf, serializeRecommendation } from './llm-recommendation-file';
import { LlmRecommendationHandler } from './llm-recommendation.handler';
import {
  FIXTURE_NOW,
  OHLCV_4H,
  RECO_STEP,
  recommendationFixture,
  uriOf,
  type RecommendationFixtureOptions,
} from './testing/llm-recommendation.fixtures';

/**
 * The LLM_RECOMMENDATION handler alone, on the context the harness would build (handlerContext:
 * inputs validated, upstream references checked, the upstream reader over the fixture's
 * artifacts) and a real LlmStepRuntime over a scripted or offline client.
 */
const CANARY = 'CANARY-reco-91c2';

async function setup(
  client: LlmClient,
  options: RecommendationFixtureOptions & { edit?: (run: FlowRun) => FlowRun } = {},
) {
  const fixture = await recommendationFixture(options);
  const run = options.edit === undefined ? fixture.run : options.edit(fixture.run);
  const runtime = new LlmStepRuntime({
    registry: new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS, schemas: DEFAULT_SCHEMAS }),
    client,
    outputKind: 'LLM_RECOMMENDATION_OUTPUT',
    sleep: async () => undefined,
  });
  const context = requireHandlerContext(LLM_RECOMMENDATION_STEP, {
    run,
    stepId: RECO_STEP,
    artifacts: fixture.artifacts,
    deadline: new Date(FIXTURE_NOW.getTime() + 780_000),
    now: () => FIXTURE_NOW,
  });
  return { handler: new LlmRecommendationHandler(runtime), context, fixture };
}

function fileOf(data: Buffer | undefined): LlmRecommendationFile {
  const checked = validate.llmRecommendationFile(JSON.parse(data?.toString('utf8') ?? ''));
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.value;
}

describe('LlmRecommendationHandler.execute', () => {
  it('writes the recommendation file and names it in outputs.recommendationId (offline recommender)', async () => {
    const { handler, context, fixture } = await setup(new OfflineRecommenderClient());
    const result = await handler.execute(context);
    const { runId } = fixture.run;
    expect(result.primaryUri).toBe(fixture.recoUri);
    expect(result.outputs).toEqual({ recommendationId: recommendationIdFor(runId, RECO_STEP) });
    const file = fileOf(result.artifacts[0]?.data);
    expect(file.metadata).toMatchObject({
      schemaVersion: 1,
      runId,
      stepId: RECO_STEP,
      symbol: 'BTC-USDT',
      asOf: RECO_AS_OF,
      lastClose: RECO_LAST_CLOSE,
      riskLimits: { source: 'account', maxPositionFraction: 0.2, maxRiskPerTradeFraction: 0.01 },
      recommendationId: recommendationIdFor(runId, RECO_STEP),
      promptId: 'prompt_reco_v1',
      schemaId: 'llm_recommendation_output_v1',
      provider: 'offline',
      inputs: {
        ohlcvGcsUri: uriOf(runId, '4h', OHLCV_4H),
        reports: fixture.reportIds.map((reportId, i) => ({
          reportId,
          timeframe: ['1w', '1d', '4h'][i],
        })),
        accountGcsUri: uriOf(runId, '_', 'account_export'),
        accountId: 'demo',
      },
      llm: { finishReason: 'STOP', modelVersion: 'offline-recommender-v1', attempts: { total: 1 } },
    });
    expect(file.output.action).toBe('BUY');
    expect(file.output.rationale.citations.map((c) => c.reportId)).toEqual(fixture.reportIds);
    expect(LLM_RECOMMENDATION_STEP.artifact.check?.(file)).toBeUndefined();
    // deterministic bytes: a re-execution writes the same file
    const again = await handler.execute(context);
    expect(again.artifacts[0]?.data.equals(result.artifacts[0]?.data ?? Buffer.alloc(0))).toBe(
      true,
    );
  });

  it('reads no account when the inputs name none: the default limit, no account in the file', async () => {
    const { handler, context } = await setup(new OfflineRecommenderClient(), { account: null });
    expect(await context.upstream('account')).toBeUndefined();
    const file = fileOf((await handler.execute(context)).artifacts[0]?.data);
    expect(file.metadata.riskLimits).toEqual({ source: 'default', maxPositionFraction: 0.1 });
    expect(file.metadata.inputs.accountGcsUri).toBeUndefined();
    expect(file.output.size?.fractionOfEquity).toBeLessThanOrEqual(0.1);
  });

  it('gives the model every report by reportId and the rules its answer broke, then accepts the repair', async () => {
    const fixture = await recommendationFixture();
    const bad = validRecommendationOutput(fixture.reportIds, {
      stopLoss: 63_000, // above entry.low for a BUY
      headline: `BUY ${CANARY}`,
      size: { fractionOfEquity: 0.5 }, // over the account's 0.2
    });
    const client = new ScriptedLlmClient([
      jsonResponse(bad),
      jsonResponse(validRecommendationOutput(fixture.reportIds), { responseId: 'resp-ok' }),
    ]);
    const { handler, context } = await setup(client);
    const result = await handler.execute(context);
    expect(fileOf(result.artifacts[0]?.data).metadata.llm).toMatchObject({
      attempts: { total: 2 },
      requestId: 'resp-ok',
    });
    const [first, repair] = client.requests;
    const userInput = first?.contents[0];
    const text = userInput !== undefined && 'text' in userInput ? userInput.text : '';
    for (const reportId of fixture.reportIds) expect(text).toContain(`- ${reportId} - `);
    expect(text).toContain(`- Last close at asOf: ${RECO_LAST_CLOSE}`);
    const repairPart = repair?.contents.at(-1);
    const repairText = repairPart !== undefined && 'text' in repairPart ? repairPart.text : '';
    expect(repairText).toContain('kind=invariant_violation');
    expect(repairText).toContain(
      '- /stopLoss: BUY: stopLoss must be below entry.low (buy_stop_below_entry)',
    );
    expect(repairText).toContain('(size_within_position_limit)');
    expect(result.execution).toMatchObject({
      llm: { repair: { attempted: true, reasonKind: 'invariant_violation' }, requests: 2 },
    });
  });

  it('fails INVALID_STRUCTURED_OUTPUT naming the broken rules when the repair breaks them too (final)', async () => {
    const fixture = await recommendationFixture();
    const reduce = validRecommendationOutput(fixture.reportIds, {
      action: 'REDUCE',
      headline: CANARY,
      rationale: {
        summary: CANARY,
        citations: [{ reportId: 'rpt_ffffffffffffffffffffffff', claim: CANARY }],
      },
    });
    const { handler, context } = await setup(
      new ScriptedLlmClient([jsonResponse(reduce), jsonResponse(reduce)]),
    );
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({
      code: 'INVALID_STRUCTURED_OUTPUT',
      final: true,
      execution: { llm: { attempts: { total: 2 }, requests: 2 } },
    });
    expect((error as StepError).message).toBe(
      'structured output invalid: kind=invariant_violation finishReason=STOP (the output breaks 2 rule(s): reduce_needs_position, citations_cite_inputs); the repair attempt was invalid too',
    );
    expect(
      JSON.stringify({ ...(error as StepError).toErrorInfo(), e: (error as StepError).execution }),
    ).not.toContain(CANARY);
  });

  it('accepts a REDUCE of the open position (the account says how much is held)', async () => {
    const account = { positions: [accountPosition({ fractionOfEquity: 0.15 })] };
    const fixture = await recommendationFixture({ account });
    const {
      entry: _e,
      stopLoss: _s,
      takeProfit: _t,
      ...rest
    } = validRecommendationOutput(fixture.reportIds);
    const reduce = { ...rest, action: 'REDUCE' as const, size: { fractionOfEquity: 0.15 } };
    const { handler, context } = await setup(new ScriptedLlmClient([jsonResponse(reduce)]), {
      account,
    });
    expect(fileOf((await handler.execute(context)).artifacts[0]?.data).output.action).toBe(
      'REDUCE',
    );
  });

  it('refuses inputs cut at another moment than the run: INVALID_STEP_INPUTS before any model call', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, context } = await setup(client, {
      edit: (run) => ({ ...run, scope: { ...run.scope, asOf: '2026-09-21T00:00:00Z' } }),
    });
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepInputError);
    expect((error as Error).message).toBe(
      "the OHLCV export of 'ohlcv_export:4h' is cut at 2026-09-20T00:00:00Z, the run describes 2026-09-21T00:00:00Z",
    );
    expect(client.calls).toBe(0);
  });

  it('refuses an account snapshot taken at another asOf', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, context } = await setup(client, {
      account: { asOf: '2026-09-19T00:00:00Z' },
    });
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepInputError);
    expect((error as Error).message).toMatch(/account snapshot of 'account_export' is taken at/);
    expect(client.calls).toBe(0);
  });

  it('takes asOf from the OHLCV export when the run has none (runs created before asOf)', async () => {
    const { handler, context } = await setup(new OfflineRecommenderClient(), {
      edit: (run) => ({ ...run, scope: { symbol: 'BTC-USDT', accountId: 'demo' } }),
    });
    const result = await handler.execute(context);
    expect(fileOf(result.artifacts[0]?.data).metadata.asOf).toBe(RECO_AS_OF);
  });
});

describe('LlmRecommendationHandler.recover', () => {
  it('finalizes from the existing file: its recommendationId and execution metadata, no model call', async () => {
    const { handler, context, fixture } = await setup(new OfflineRecommenderClient());
    const produced = await handler.execute(context);
    const bytes = produced.artifacts[0]?.data ?? Buffer.alloc(0);
    const file = fileOf(bytes);
    const recovered = await new LlmRecommendationHandler(
      new LlmStepRuntime({
        registry: new InMemoryPromptRegistry(),
        client: new ScriptedLlmClient([]),
      }),
    ).recover({ uri: fixture.recoUri, artifact: file, bytes });
    expect(recovered).toEqual({
      artifacts: [],
      primaryUri: fixture.recoUri,
      outputs: { recommendationId: recommendationIdFor(fixture.run.runId, RECO_STEP) },
      execution: { llm: executionMetadataOf(file) },
    });
    expect(serializeRecommendation(file).equals(bytes)).toBe(true);
    expect(createHash('sha256').update(bytes).digest('hex')).toHaveLength(64);
  });

  it('names the recommendation from runId and stepId for a file written without its id', async () => {
    const { handler, context, fixture } = await setup(new OfflineRecommenderClient());
    const file = fileOf((await handler.execute(context)).artifacts[0]?.data);
    const { recommendationId: _r, ...metadata } = file.metadata;
    const recovered = await handler.recover({
      uri: fixture.recoUri,
      artifact: { ...file, metadata },
      bytes: Buffer.alloc(0),
    });
    expect(recovered?.outputs).toEqual({
      recommendationId: recommendationIdFor(fixture.run.runId, RECO_STEP),
    });
  });
});
