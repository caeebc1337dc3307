import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackends } from '@tda/backends';
import type { ErrorCode, FlowRun, FlowStep } from '@tda/contracts';
import { recommendationIdFor } from '@tda/flow-engine';
import { DEFAULT_PROMPTS } from '@tda/llm';
import {
  FakeGeminiServer,
  fakeReply,
  generateContentBody,
  RECO_LAST_CLOSE,
  textResponseBody,
  validRecommendationOutput,
  type FakeGeminiReply,
} from '@tda/llm/testing';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { bootstrapWorker } from '@tda/worker-kit';
import { CountingArtifactStore, CountingFlowRunStore, deliverStep } from '@tda/worker-kit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { llmRecommendationWorker } from './llm-recommendation.worker';
import {
  countingHandler,
  parseRecommendation,
  RECO_STEP,
  recommendationFixture,
  snapshot,
  type HandlerCalls,
} from './testing/llm-recommendation.fixtures';

/**
 * seed 002's scripted-scenario matrix through the LLM_RECOMMENDATION WORKER as its main boots it:
 * bootstrapWorker(llmRecommendationWorker) on the Firestore and Pub/Sub emulators (the run
 * document, the step-ready subscription and the prompt registry, seeded at boot, live in the
 * emulators), its real GeminiLlmClient (@google/genai) talking HTTP to a FakeGeminiServer scripted
 * per test. For each scenario: the step status and error code, the EXACT number of model
 * requests, the artifact validated against llm_recommendation_file, outputs.recommendationId, and
 * no model output (a canary in every answer and provider error), prompt text or account balance
 * in the logs, the store writes or the run document.
 */
const CANARY = 'CANARY-7d41e2-reco-model-text';
const API_KEY = 'fake-key-9b3f08';
const MODEL_VERSION = 'gemini-2.5-flash-001';
const USAGE = { promptTokenCount: 2100, candidatesTokenCount: 400, totalTokenCount: 2500 };
/** The system instruction's first words: prompt text must not leave the model request. */
const PROMPT_TEXT = DEFAULT_PROMPTS.find(
  (p) => p.promptId === 'prompt_reco_v1',
)?.systemInstruction.slice(0, 60);
/** The fixture account's equity: a balance must not leave the model request either. */
const EQUITY = '21137.5';

let server: FakeGeminiServer;
let scenarioCount = 0;

beforeAll(async () => {
  server = await FakeGeminiServer.start({ apiKey: API_KEY });
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  const left = server.remainingReplies;
  server.reset();
  expect(left).toBe(0); // every scripted answer was consumed
});

// -- scripted answers ---------------------------------------------------------------------------

type Output = ReturnType<typeof validRecommendationOutput>;

function body(spec: Parameters<typeof generateContentBody>[0], responseId: string) {
  return generateContentBody({
    usageMetadata: USAGE,
    modelVersion: MODEL_VERSION,
    responseId,
    ...spec,
  });
}

function text(value: string, responseId: string, finishReason = 'STOP'): FakeGeminiReply {
  return fakeReply.ok(
    body({ candidates: [{ parts: [{ text: value }], finishReason }] }, responseId),
  );
}

function answer(output: Output, responseId: string): FakeGeminiReply {
  return fakeReply.ok(
    textResponseBody(JSON.stringify(output), {
      responseId,
      modelVersion: MODEL_VERSION,
      usageMetadata: USAGE,
    }),
  );
}

/** A valid BUY citing the first input report; its headline carries the canary (artifact only). */
function valid(reportIds: readonly string[], responseId: string): FakeGeminiReply {
  return answer(
    validRecommendationOutput(reportIds, { headline: `BUY BTC-USDT ${CANARY}` }),
    responseId,
  );
}

/** Schema-valid but breaking two rules: a BUY stop above the entry, a size over the limit. */
function broken(reportIds: readonly string[], responseId: string): FakeGeminiReply {
  return answer(
    validRecommendationOutput(reportIds, {
      headline: `BUY ${CANARY}`,
      stopLoss: 63_000,
      size: { fractionOfEquity: 0.5 },
    }),
    responseId,
  );
}

const rateLimited = (): FakeGeminiReply =>
  fakeReply.error(429, 'RESOURCE_EXHAUSTED', `Quota exceeded; echo: ${CANARY}`);
const overloaded = (): FakeGeminiReply =>
  fakeReply.error(503, 'UNAVAILABLE', `The model is overloaded; echo: ${CANARY}`);

// -- one scenario: a fresh worker on the emulators ----------------------------------------------

interface Scenario {
  step: FlowStep;
  stored: FlowRun;
  log: MemoryLogger;
  store: CountingFlowRunStore;
  calls: HandlerCalls;
  sleeps: number[];
  bytes: Buffer | null;
  recoUri: string;
  reportIds: string[];
  runId: string;
}

/**
 * Boots the worker on the emulators (its own Firestore project and Pub/Sub prefix: the registry
 * is seeded into it at boot, and runs of scenarios in the same second cannot collide), puts
 * a flow-4 run whose recommendation step is READY and its upstream artifacts into the worker's
 * backends, publishes the step-ready message as the orchestrator would and waits for the final
 * step; `replies` are built from the run's reportIds.
 */
async function scenario(
  replies: (reportIds: readonly string[]) => FakeGeminiReply[],
): Promise<Scenario> {
  const { firestoreHost, pubsubHost } = emulatorEndpoints();
  scenarioCount += 1;
  const dataDir = await mkdtemp(join(tmpdir(), 'tda-reco-'));
  const log = createMemoryLogger();
  const calls: HandlerCalls = { executions: 0, recoveries: 0 };
  const sleeps: number[] = [];
  let counted: { store: CountingFlowRunStore; artifacts: CountingArtifactStore } | undefined;
  const handle = await bootstrapWorker(llmRecommendationWorker, {
    env: {
      TDA_BACKEND: 'emulators',
      GOOGLE_CLOUD_PROJECT: uniqueName('tda-reco'),
      FIRESTORE_EMULATOR_HOST: firestoreHost,
      PUBSUB_EMULATOR_HOST: pubsubHost,
      TDA_DATA_DIR: dataDir,
      TDA_PUBSUB_PREFIX: `trc${scenarioCount}${Date.now().toString(36)}`,
      PORT: '0',
      GEMINI_API_KEY: API_KEY,
      TDA_GEMINI_BASE_URL: server.baseUrl,
    },
    logger: log.logger,
    overrides: {
      runtime: {
        sleep: async (ms: number) => {
          sleeps.push(ms);
        },
      },
    },
    decorate: (handler) => countingHandler(handler, calls),
    createBackends: async (config) => {
      const backends = await createBackends(config);
      counted = {
        store: new CountingFlowRunStore(backends.store),
        artifacts: new CountingArtifactStore(backends.artifacts),
      };
      return { ...backends, ...counted };
    },
  });
  try {
    if (counted === undefined) throw new Error('the worker built no backends');
    expect(handle.handler.runtime.provider).toBe('gemini');
    const { store, artifacts } = counted;
    const fixture = await recommendationFixture({ now: new Date() });
    const { run } = fixture;
    for (const [uri, data] of await snapshot(fixture.artifacts)) {
      await artifacts.inner.put(uri, data, { contentType: 'application/json' });
    }
    server.enqueue(...replies(fixture.reportIds));
    await store.inner.create(run);
    await deliverStep(
      handle,
      { runId: run.runId, stepId: RECO_STEP, stepType: 'LLM_RECOMMENDATION' },
      { store: store.inner, timeoutMs: 30_000 },
    );
    // Read while the worker's Firestore client is open, then drain the delivery (step event, ack).
    const stored = (await store.inner.get(run.runId))?.run;
    const step = stored?.steps[RECO_STEP];
    if (stored === undefined || step === undefined) throw new Error('recommendation step vanished');
    const exists = await artifacts.inner.exists(fixture.recoUri);
    const bytes = exists ? await artifacts.inner.read(fixture.recoUri) : null;
    await handle.close();
    return {
      step,
      stored,
      log,
      store,
      calls,
      sleeps,
      bytes,
      recoUri: fixture.recoUri,
      reportIds: fixture.reportIds,
      runId: run.runId,
    };
  } finally {
    await handle.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// -- expectations -------------------------------------------------------------------------------

function expectNoLeak(run: Scenario): void {
  if (PROMPT_TEXT === undefined) throw new Error('no prompt_reco_v1');
  for (const [what, serialized] of [
    ['logs', JSON.stringify(run.log.records)],
    ['store writes', JSON.stringify(run.store.recorded.map((u) => u.patch))],
    ['run document', JSON.stringify(run.stored)],
  ] as const) {
    expect(serialized.includes(CANARY), `${what} contain model output`).toBe(false);
    expect(serialized.includes(PROMPT_TEXT), `${what} contain prompt text`).toBe(false);
    expect(serialized.includes(EQUITY), `${what} contain the account's equity`).toBe(false);
    expect(serialized.includes(API_KEY), `${what} contain the API key`).toBe(false);
  }
}

function expectSucceeded(
  run: Scenario,
  expected: {
    httpCalls: number;
    attempts: number;
    requestId: string;
    repair: Record<string, unknown>;
  },
): void {
  const { step } = run;
  expect(step.error).toBeUndefined();
  expect(step.status).toBe('SUCCEEDED');
  expect(server.callCount).toBe(expected.httpCalls);
  expect(step.outputs.gcs_uri).toBe(run.recoUri);
  expect(step.outputs.recommendationId).toBe(recommendationIdFor(run.runId, RECO_STEP));
  const file = parseRecommendation(run.bytes); // exists and passes validate.llmRecommendationFile
  expect(file.metadata).toMatchObject({
    recommendationId: step.outputs.recommendationId,
    lastClose: RECO_LAST_CLOSE,
    provider: 'gemini',
    llm: {
      finishReason: 'STOP',
      requestId: expected.requestId,
      attempts: { total: expected.attempts },
    },
  });
  expect(file.output.headline).toContain(CANARY); // the model's text reached the artifact only
  const bytes = run.bytes ?? Buffer.alloc(0);
  expect(step.outputs.execution?.artifact).toEqual({
    gcs_uri: run.recoUri,
    contentType: 'application/json',
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: bytes.length,
  });
  expect(step.outputs.execution?.['llm']).toMatchObject({
    provider: 'gemini',
    promptId: 'prompt_reco_v1',
    schemaId: 'llm_recommendation_output_v1',
    requests: expected.httpCalls,
    attempts: { total: expected.attempts },
    repair: expected.repair,
  });
  expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
  expectNoLeak(run);
}

function expectFailed(run: Scenario, expected: { code: ErrorCode; httpCalls: number }): void {
  const { step } = run;
  expect(step.status).toBe('FAILED');
  expect(step.error?.code).toBe(expected.code);
  expect(server.callCount).toBe(expected.httpCalls);
  expect(run.bytes).toBeNull();
  expect(step.outputs.gcs_uri).toBeUndefined();
  expect(step.outputs.recommendationId).toBeUndefined();
  // final after the model was asked: one execution, no in-process retry
  expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
  expect(step.outputs.execution?.['llm']).toMatchObject({
    provider: 'gemini',
    promptId: 'prompt_reco_v1',
    schemaId: 'llm_recommendation_output_v1',
    requests: expected.httpCalls,
  });
  expectNoLeak(run);
}

// -- the matrix ---------------------------------------------------------------------------------

describe('LLM_RECOMMENDATION worker × emulators × real Gemini SDK × scripted server (seed 002 matrix)', () => {
  it('1. a valid answer → SUCCEEDED after one request, the registry schema on the wire', async () => {
    const run = await scenario((ids) => [valid(ids, 'resp-1')]);
    expectSucceeded(run, {
      httpCalls: 1,
      attempts: 1,
      requestId: 'resp-1',
      repair: { attempted: false },
    });
    const request = server.requests[0];
    expect(request?.body?.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
    const schema = request?.body?.generationConfig?.['responseJsonSchema'] as {
      required?: unknown;
    };
    expect(schema.required).toEqual([
      'action',
      'signal_strength',
      'headline',
      'horizon',
      'rationale',
      'risks',
    ]);
    const userInput = JSON.stringify(request?.body?.contents);
    for (const reportId of run.reportIds) expect(userInput).toContain(reportId);
    expect(run.sleeps).toEqual([]);
  });

  it('2. invalid JSON, then a valid repair → SUCCEEDED after two requests', async () => {
    const run = await scenario((ids) => [
      text(`not json ${CANARY}`, 'resp-bad'),
      valid(ids, 'resp-2'),
    ]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 2,
      requestId: 'resp-2',
      repair: { attempted: true, reasonKind: 'json_parse' },
    });
  });

  it('3. a broken rule, then a valid repair → SUCCEEDED after two requests; the repair names the rules', async () => {
    const run = await scenario((ids) => [broken(ids, 'resp-rule'), valid(ids, 'resp-3')]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 2,
      requestId: 'resp-3',
      repair: { attempted: true, reasonKind: 'invariant_violation' },
    });
    const repairText = JSON.stringify(server.requests[1]?.body?.contents);
    expect(repairText).toContain('buy_stop_below_entry');
    expect(repairText).toContain('size_within_position_limit');
    expect(run.log.withEvent('structured_output_invalid')[0]).toMatchObject({
      reason: {
        kind: 'invariant_violation',
        message: 'the output breaks 2 rule(s): buy_stop_below_entry, size_within_position_limit',
      },
    });
  });

  it('4. broken rules twice → FAILED INVALID_STRUCTURED_OUTPUT naming the rules, two requests, no artifact', async () => {
    const run = await scenario((ids) => [broken(ids, 'resp-rule-1'), broken(ids, 'resp-rule-2')]);
    expectFailed(run, { code: 'INVALID_STRUCTURED_OUTPUT', httpCalls: 2 });
    expect(run.step.error).toMatchObject({
      retryable: false,
      message:
        'structured output invalid: kind=invariant_violation finishReason=STOP (the output breaks 2 rule(s): buy_stop_below_entry, size_within_position_limit); the repair attempt was invalid too',
      details: {
        reasonKind: 'invariant_violation',
        repair: { attempted: true },
        firstAttempt: { reasonKind: 'invariant_violation' },
        validationErrors: [
          {
            path: '/stopLoss',
            keyword: 'buy_stop_below_entry',
            message: 'BUY: stopLoss must be below entry.low',
          },
          {
            path: '/size/fractionOfEquity',
            keyword: 'size_within_position_limit',
            message: 'size.fractionOfEquity must not exceed riskLimits.maxPositionFraction',
          },
        ],
      },
    });
  });

  it('5. finishReason SAFETY → FAILED LLM_SAFETY_BLOCK after one request, no repair', async () => {
    const run = await scenario(() => [
      fakeReply.ok(
        body(
          { candidates: [{ parts: [{ text: `partial ${CANARY}` }], finishReason: 'SAFETY' }] },
          'resp-safety',
        ),
      ),
    ]);
    expectFailed(run, { code: 'LLM_SAFETY_BLOCK', httpCalls: 1 });
    expect(run.step.error?.details).toMatchObject({ finishReason: 'SAFETY' });
    expect(run.log.withEvent('structured_output_repair_attempt_started')).toEqual([]);
  });

  it('6. MAX_TOKENS (cut JSON), then a valid repair → SUCCEEDED after two requests', async () => {
    const cut = (ids: readonly string[]) =>
      text(
        JSON.stringify(validRecommendationOutput(ids, { headline: CANARY })).slice(0, 80),
        'resp-cut',
        'MAX_TOKENS',
      );
    const run = await scenario((ids) => [cut(ids), valid(ids, 'resp-6')]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 2,
      requestId: 'resp-6',
      repair: { attempted: true, reasonKind: 'incomplete_output' },
    });
  });

  it('6b. MAX_TOKENS twice → FAILED INVALID_STRUCTURED_OUTPUT after two requests', async () => {
    const cut = (ids: readonly string[], id: string) =>
      text(
        JSON.stringify(validRecommendationOutput(ids, { headline: CANARY })).slice(0, 80),
        id,
        'MAX_TOKENS',
      );
    const run = await scenario((ids) => [cut(ids, 'resp-cut-1'), cut(ids, 'resp-cut-2')]);
    expectFailed(run, { code: 'INVALID_STRUCTURED_OUTPUT', httpCalls: 2 });
    expect(run.step.error?.details).toMatchObject({
      reasonKind: 'incomplete_output',
      finishReason: 'MAX_TOKENS',
    });
  });

  it('7. 429 then 503 (transient), then a valid answer → SUCCEEDED after three requests, one model attempt', async () => {
    const run = await scenario((ids) => [rateLimited(), overloaded(), valid(ids, 'resp-7')]);
    expectSucceeded(run, {
      httpCalls: 3,
      attempts: 1,
      requestId: 'resp-7',
      repair: { attempted: false },
    });
    expect(run.sleeps).toEqual([1_000, 2_000]);
    expect(run.step.outputs.execution?.['llm']).toMatchObject({ answered: 1 });
  });

  it('7b. 429 then 503 on every try → FAILED LLM_UNAVAILABLE after the runtime’s three requests', async () => {
    const run = await scenario(() => [rateLimited(), overloaded(), overloaded()]);
    expectFailed(run, { code: 'LLM_UNAVAILABLE', httpCalls: 3 });
    expect(run.step.error).toMatchObject({
      retryable: true,
      details: { status: 503, retriesExhausted: true, tries: 3 },
    });
    expect(run.sleeps).toEqual([1_000, 2_000]);
  });
});
