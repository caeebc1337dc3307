import { createHash } from 'node:crypto';
import type { ErrorCode, FlowStep } from '@tda/contracts';
import { GeminiLlmClient } from '@tda/llm';
import {
  FakeGeminiServer,
  fakeReply,
  generateContentBody,
  textResponseBody,
  validReportOutput,
  type FakeGeminiReply,
} from '@tda/llm/testing';
import { expectEventually } from '@tda/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  parseReport,
  runLlmReportStep,
  type LlmReportStepRun,
  type RunLlmReportStepOptions,
} from './testing/llm-report.fixtures';

/**
 * seed 002's scripted-scenario matrix through the WORKER: the real StepHarness, the real
 * LlmReportHandler and the real GeminiLlmClient (@google/genai SDK) talking HTTP to a
 * FakeGeminiServer on a loopback port, scripted per test. For each scenario: the step status,
 * error.code, the exact number of HTTP requests, the persisted outputs.execution (llm metadata,
 * timing, artifact) and the artifact itself; a canary planted in every model answer (and in the
 * provider's error messages) must reach neither a log line, a store write nor a step event.
 * Loopback sockets only: no emulators needed.
 */
const CANARY = 'CANARY-5be1d0-model-text';
const API_KEY = 'fake-key-2c9e71';
const MODEL = 'gemini-2.5-flash';
const MODEL_VERSION = 'gemini-2.5-flash-001';
const USAGE = { promptTokenCount: 1200, candidatesTokenCount: 300, totalTokenCount: 1500 };

let server: FakeGeminiServer;

beforeAll(async () => {
  server = await FakeGeminiServer.start({ apiKey: API_KEY });
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  // Every scripted answer was consumed: no scenario silently stopped early.
  const left = server.remainingReplies;
  server.reset();
  expect(left).toBe(0);
});

// -- scripted answers ---------------------------------------------------------------------------

function reportJson(markdown: string): string {
  return JSON.stringify(validReportOutput(markdown));
}

/** A valid report answer; its markdown carries the canary (it belongs in the artifact only). */
function valid(responseId: string, markdown = `## 1w\n\nWeekly holds. ${CANARY}`): FakeGeminiReply {
  return fakeReply.ok(
    textResponseBody(reportJson(markdown), {
      responseId,
      modelVersion: MODEL_VERSION,
      usageMetadata: USAGE,
    }),
  );
}

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

/** A report cut off mid-string, as a MAX_TOKENS generation returns it. */
function truncated(responseId: string): FakeGeminiReply {
  return text(
    reportJson(`## 1w ${CANARY} and then the tokens ran out`).slice(0, 60),
    responseId,
    'MAX_TOKENS',
  );
}

const rateLimited = (): FakeGeminiReply =>
  fakeReply.error(429, 'RESOURCE_EXHAUSTED', `Quota exceeded; echo: ${CANARY}`);
const overloaded = (): FakeGeminiReply =>
  fakeReply.error(503, 'UNAVAILABLE', `The model is overloaded; echo: ${CANARY}`);

// -- running a scenario -------------------------------------------------------------------------

interface Scenario extends LlmReportStepRun {
  /** Backoff sleeps the pipeline asked for (the fake sleep returns at once). */
  sleeps: number[];
  elapsedMs: number;
}

async function scenario(
  replies: FakeGeminiReply[],
  options: Pick<RunLlmReportStepOptions, 'policy' | 'handler'> = {},
): Promise<Scenario> {
  server.enqueue(...replies);
  const sleeps: number[] = [];
  const started = performance.now();
  const run = await runLlmReportStep({
    client: new GeminiLlmClient({ apiKey: API_KEY, baseUrl: server.baseUrl }),
    // A real clock: the time budget, the harness deadline and the persisted timing are real.
    now: new Date(),
    clock: () => new Date(),
    policy: { handlerRetryBaseDelayMs: 1, handlerRetryMaxDelayMs: 1, ...options.policy },
    handler: {
      ...options.handler,
      sleep: async (ms: number) => {
        sleeps.push(ms);
      },
    },
  });
  return { ...run, sleeps, elapsedMs: performance.now() - started };
}

function execution(step: FlowStep): Record<string, unknown> {
  const value = step.outputs.execution;
  if (value === undefined) throw new Error('no outputs.execution');
  return value;
}

/** timing.startedAt (the claim), finishedAt (= the step's) and durationMs between them. */
function expectTiming(step: FlowStep): void {
  const timing = step.outputs.execution?.timing;
  expect(typeof timing?.startedAt).toBe('string');
  expect(timing?.finishedAt).toBe(step.finishedAt);
  const startedMs = Date.parse(String(timing?.startedAt));
  const finishedMs = Date.parse(String(timing?.finishedAt));
  expect(Number.isFinite(startedMs) && Number.isFinite(finishedMs)).toBe(true);
  expect(timing?.durationMs).toBe(finishedMs - startedMs);
  expect(timing?.durationMs).toBeGreaterThanOrEqual(0);
}

/** Neither the model's text (nor the provider's error text) nor the API key left the model call. */
function expectNoLeak(run: Scenario): void {
  for (const [what, serialized] of [
    ['logs', JSON.stringify(run.log.records)],
    ['store writes', JSON.stringify(run.store.recorded.map((u) => u.patch))],
    ['run document', JSON.stringify(run.stored)],
    ['step events', JSON.stringify(run.publisher.published)],
  ] as const) {
    expect(serialized.includes(CANARY), `${what} contain the canary`).toBe(false);
    expect(serialized.includes(API_KEY), `${what} contain the API key`).toBe(false);
  }
  expect(run.store.writes).toBeGreaterThanOrEqual(2); // claim + finalize were inspected
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
  expect(run.outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
  expect(step.status).toBe('SUCCEEDED');
  expect(step.error).toBeUndefined();
  expect(server.callCount).toBe(expected.httpCalls);
  expect(step.outputs.gcs_uri).toBe(run.reportUri);

  const report = parseReport(run.bytes); // exists and passes validate.llmReportFile
  expect(report.metadata.llm).toMatchObject({
    finishReason: 'STOP',
    modelVersion: MODEL_VERSION,
    requestId: expected.requestId,
    usageMetadata: USAGE,
    attempts: { total: expected.attempts },
  });
  const bytes = run.bytes ?? Buffer.alloc(0);
  const exec = execution(step);
  expect(exec['artifact']).toEqual({
    gcs_uri: run.reportUri,
    contentType: 'application/json',
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: bytes.length,
  });
  expect(exec['llm']).toEqual({
    provider: 'gemini',
    modelName: MODEL,
    promptId: 'prompt_week_v1',
    schemaId: 'llm_report_output_v1',
    schemaSha256: report.metadata.llm.schemaSha256,
    finishReason: 'STOP',
    modelVersion: MODEL_VERSION,
    requestId: expected.requestId,
    usageMetadata: USAGE,
    attempts: { total: expected.attempts },
    repair: expected.repair,
    calls: expected.httpCalls,
  });
  expectTiming(step);
  expectNoLeak(run);
}

function expectFailed(
  run: Scenario,
  expected: { code: ErrorCode; retryable: boolean; httpCalls: number; tries?: number },
): Record<string, unknown> {
  const { step } = run;
  expect(run.outcome).toMatchObject({ kind: 'failed', status: 'FAILED', errorCode: expected.code });
  expect(step.status).toBe('FAILED');
  expect(step.error).toMatchObject({ code: expected.code, retryable: expected.retryable });
  if (expected.tries !== undefined) expect(step.error?.details?.['tries']).toBe(expected.tries);
  expect(server.callCount).toBe(expected.httpCalls);
  expect(run.bytes).toBeNull();
  expect(step.outputs.gcs_uri).toBeUndefined();
  const exec = execution(step);
  expect(exec['artifact']).toBeUndefined();
  expect(exec['worker']).toBe('llm-worker-test');
  expectTiming(step);
  expectNoLeak(run);
  const llm = exec['llm'];
  if (typeof llm !== 'object' || llm === null) throw new Error('no outputs.execution.llm');
  // The identity of the call is known whatever failed.
  expect(llm).toMatchObject({
    provider: 'gemini',
    modelName: MODEL,
    promptId: 'prompt_week_v1',
    schemaId: 'llm_report_output_v1',
  });
  return llm as Record<string, unknown>;
}

function repairEvents(run: Scenario): { invalid: unknown[]; finished: unknown[] } {
  return {
    invalid: run.log.withEvent('structured_output_invalid').map((r) => r['reason']),
    finished: run.log
      .withEvent('structured_output_repair_attempt_finished')
      .map((r) => r['status']),
  };
}

// -- the matrix ---------------------------------------------------------------------------------

describe('LLM_REPORT worker × real Gemini SDK × scripted fake server (seed 002 matrix)', () => {
  it('1. valid JSON → SUCCEEDED after one call', async () => {
    const run = await scenario([valid('resp-1')]);
    expectSucceeded(run, {
      httpCalls: 1,
      attempts: 1,
      requestId: 'resp-1',
      repair: { attempted: false },
    });
    // What went over the wire: the profile's model, the key as a header, structured output on.
    const request = server.requests[0];
    expect(request).toMatchObject({ model: MODEL, api: 'gemini', auth: 'api-key-header' });
    expect(request?.body?.generationConfig).toMatchObject({
      responseMimeType: 'application/json',
    });
    expect(request?.body?.generationConfig?.['responseJsonSchema']).toBeTypeOf('object');
    // The model's text reached the artifact (and only the artifact).
    expect(parseReport(run.bytes).output.summary.markdown).toContain(CANARY);
    expect(run.sleeps).toEqual([]);
  });

  it('2. invalid JSON, then a valid repair → SUCCEEDED after two calls', async () => {
    const run = await scenario([text(`not json at all ${CANARY}`, 'resp-bad'), valid('resp-2')]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 2,
      requestId: 'resp-2',
      repair: { attempted: true, reasonKind: 'json_parse' },
    });
    // The repair call is the original request plus one repair instruction part.
    const [first, repair] = server.requests.map((r) => r.body?.contents?.[0]?.parts?.length ?? 0);
    expect(repair).toBe((first ?? 0) + 1);
    expect(repairEvents(run)).toEqual({
      invalid: [{ kind: 'json_parse', message: 'the candidate text is not valid JSON' }],
      finished: ['succeeded'],
    });
  });

  it('3. invalid twice → FAILED INVALID_STRUCTURED_OUTPUT, two calls, no artifact', async () => {
    const run = await scenario([
      text(`not json ${CANARY}`, 'resp-bad-1'),
      text(JSON.stringify({ summary: { [CANARY]: CANARY }, details: CANARY }), 'resp-bad-2'),
    ]);
    const llm = expectFailed(run, {
      code: 'INVALID_STRUCTURED_OUTPUT',
      retryable: false,
      httpCalls: 2,
    });
    expect(run.step.error?.details).toMatchObject({
      reasonKind: 'schema_validation',
      finishReason: 'STOP',
      repair: { attempted: true },
      firstAttempt: { reasonKind: 'json_parse' },
    });
    expect(llm).toMatchObject({
      finishReason: 'STOP',
      modelVersion: MODEL_VERSION,
      requestId: 'resp-bad-2',
      usageMetadata: USAGE,
      attempts: { total: 2 },
      repair: { attempted: true, reasonKind: 'json_parse' },
      calls: 2,
    });
    expect(run.outcome.tries).toBe(1); // not retryable: the harness did not try again
  });

  it('4. finishReason SAFETY → FAILED LLM_SAFETY_BLOCK after one call, no repair', async () => {
    const run = await scenario([
      fakeReply.ok(
        body(
          {
            candidates: [
              {
                parts: [{ text: `partial ${CANARY}` }],
                finishReason: 'SAFETY',
                safetyRatings: [
                  {
                    category: 'HARM_CATEGORY_DANGEROUS_CONTENT',
                    probability: 'HIGH',
                    blocked: true,
                  },
                ],
              },
            ],
          },
          'resp-safety',
        ),
      ),
    ]);
    const llm = expectFailed(run, { code: 'LLM_SAFETY_BLOCK', retryable: false, httpCalls: 1 });
    expect(run.step.error?.details).toMatchObject({
      finishReason: 'SAFETY',
      safetyRatings: [
        { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
      ],
    });
    expect(llm).toMatchObject({
      finishReason: 'SAFETY',
      requestId: 'resp-safety',
      modelVersion: MODEL_VERSION,
      usageMetadata: USAGE,
      attempts: { total: 1 },
      repair: { attempted: false },
      calls: 1,
    });
    expect(run.log.withEvent('structured_output_repair_attempt_started')).toEqual([]);
  });

  it('4b. a blocked prompt (promptFeedback.blockReason, no candidates) → LLM_SAFETY_BLOCK, one call', async () => {
    const run = await scenario([
      fakeReply.ok(body({ promptFeedback: { blockReason: 'SAFETY' } }, 'resp-blocked')),
    ]);
    const llm = expectFailed(run, { code: 'LLM_SAFETY_BLOCK', retryable: false, httpCalls: 1 });
    expect(run.step.error?.details).toMatchObject({ blockReason: 'SAFETY' });
    expect(llm).toMatchObject({
      finishReason: 'FINISH_REASON_UNSPECIFIED',
      requestId: 'resp-blocked',
      attempts: { total: 1 },
      calls: 1,
    });
  });

  it('5. MAX_TOKENS truncation → repair; a valid repair → SUCCEEDED after two calls', async () => {
    const run = await scenario([truncated('resp-cut'), valid('resp-5')]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 2,
      requestId: 'resp-5',
      repair: { attempted: true, reasonKind: 'incomplete_output' },
    });
    expect(repairEvents(run).invalid).toEqual([
      {
        kind: 'incomplete_output',
        message: 'the generation did not complete (finishReason=MAX_TOKENS)',
      },
    ]);
  });

  it('5b. MAX_TOKENS twice → FAILED INVALID_STRUCTURED_OUTPUT after two calls', async () => {
    const run = await scenario([truncated('resp-cut-1'), truncated('resp-cut-2')]);
    const llm = expectFailed(run, {
      code: 'INVALID_STRUCTURED_OUTPUT',
      retryable: false,
      httpCalls: 2,
    });
    expect(run.step.error?.details).toMatchObject({
      reasonKind: 'incomplete_output',
      finishReason: 'MAX_TOKENS',
    });
    expect(llm).toMatchObject({
      finishReason: 'MAX_TOKENS',
      requestId: 'resp-cut-2',
      attempts: { total: 2 },
      repair: { attempted: true, reasonKind: 'incomplete_output' },
      calls: 2,
    });
  });

  it('6. no candidates → missing_text → repair → SUCCEEDED after two calls', async () => {
    const run = await scenario([fakeReply.ok(body({}, 'resp-empty')), valid('resp-6')]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 2,
      requestId: 'resp-6',
      repair: { attempted: true, reasonKind: 'missing_text' },
    });
    expect(run.log.withEvent('structured_output_invalid')[0]).toMatchObject({
      reason: { kind: 'missing_text' },
      diagnostics: { textBytes: 0 },
    });
  });

  it('7. only a thought part: the SDK response.text fallback is empty too → missing_text → repair', async () => {
    // A complete, valid report inside a THOUGHT part: seed 002 takes non-thought text parts, and
    // the fallback (the SDK's response.text) also skips thoughts, so there is no candidate text.
    const thought = reportJson(`## from a thought ${CANARY}`);
    const run = await scenario([
      fakeReply.ok(
        body(
          { candidates: [{ parts: [{ text: thought, thought: true }], finishReason: 'STOP' }] },
          'resp-thought',
        ),
      ),
      valid('resp-7', '## 1w\n\nFrom the repair.'),
    ]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 2,
      requestId: 'resp-7',
      repair: { attempted: true, reasonKind: 'missing_text' },
    });
    expect(parseReport(run.bytes).output.summary.markdown).toBe('## 1w\n\nFrom the repair.');
    expect(run.log.withEvent('structured_output_invalid')[0]).toMatchObject({
      reason: { kind: 'missing_text' },
      diagnostics: { textBytes: 0 },
    });
  });

  it('7b. an empty parts list twice (response.text undefined) → FAILED INVALID_STRUCTURED_OUTPUT', async () => {
    const empty = (id: string) =>
      fakeReply.ok(body({ candidates: [{ parts: [], finishReason: 'STOP' }] }, id));
    const run = await scenario([empty('resp-none-1'), empty('resp-none-2')]);
    const llm = expectFailed(run, {
      code: 'INVALID_STRUCTURED_OUTPUT',
      retryable: false,
      httpCalls: 2,
    });
    expect(run.step.error?.details).toMatchObject({ reasonKind: 'missing_text', textBytes: 0 });
    expect(llm).toMatchObject({
      finishReason: 'STOP',
      requestId: 'resp-none-2',
      attempts: { total: 2 },
      repair: { attempted: true, reasonKind: 'missing_text' },
    });
  });

  it('8. answers slower than the request deadline → FAILED LLM_TIMEOUT after 3 × 3 aborted calls', async () => {
    // A valid answer, but only after 5 s.
    const late = fakeReply.ok(textResponseBody(reportJson(`## late ${CANARY}`)), {
      delayMs: 5_000,
    });
    const run = await scenario(
      Array.from({ length: 9 }, () => late),
      {
        handler: { requestDeadlineMs: 200, finalizeBudgetMs: 100 },
        policy: { timeoutMs: 8_000 },
      },
    );
    const llm = expectFailed(run, {
      code: 'LLM_TIMEOUT',
      retryable: true,
      httpCalls: 9,
      tries: 3,
    });
    expect(run.step.error?.details).toMatchObject({ deadlineMs: 200, retriesExhausted: true });
    // The client gave up on every request (the server saw it go away) and nothing hung: well
    // below the 8 s step timeout (9 × 200 ms plus overhead).
    await expectEventually(() => expect(server.requests.every((r) => r.aborted)).toBe(true), {
      timeoutMs: 5_000,
    });
    expect(run.elapsedMs).toBeLessThan(7_000);
    expect(run.sleeps).toEqual([1_000, 2_000, 1_000, 2_000, 1_000, 2_000]);
    // No response was received: only the counts of the last harness try are known.
    expect(llm).toEqual({
      provider: 'gemini',
      modelName: MODEL,
      promptId: 'prompt_week_v1',
      schemaId: 'llm_report_output_v1',
      schemaSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      attempts: { total: 1 },
      repair: { attempted: false },
      calls: 3,
    });
  });

  it('8b. a step timeout shorter than the request deadline bounds the call; then the finalize reserve stops new calls', async () => {
    // Step budget 2 s, reserve 1 s, request deadline 10 s: the one call gets ≈ 1 s, no retry
    // fits above the reserve, and the harness's further tries meet the guardrail without a call.
    const run = await scenario([fakeReply.hang()], {
      handler: { requestDeadlineMs: 10_000, finalizeBudgetMs: 1_000 },
      policy: { timeoutMs: 2_000 },
    });
    const llm = expectFailed(run, {
      code: 'LLM_TIMEOUT',
      retryable: true,
      httpCalls: 1,
      tries: 3,
    });
    expect(run.step.error?.details).toMatchObject({ reason: 'finalize_budget_guardrail' });
    await expectEventually(() => expect(server.requests[0]?.aborted).toBe(true), {
      timeoutMs: 5_000,
    });
    expect(run.elapsedMs).toBeLessThan(5_000); // far below the 10 s request deadline
    expect(llm).toMatchObject({ attempts: { total: 0 }, calls: 0 });
  });

  it('9. 429 then success → SUCCEEDED after two HTTP calls (one model attempt)', async () => {
    const run = await scenario([rateLimited(), valid('resp-9')]);
    expectSucceeded(run, {
      httpCalls: 2,
      attempts: 1,
      requestId: 'resp-9',
      repair: { attempted: false },
    });
    expect(run.sleeps).toEqual([1_000]);
  });

  it('9b. 429 on every try → FAILED LLM_UNAVAILABLE after 3 pipeline × 3 harness tries = 9 calls', async () => {
    const run = await scenario(Array.from({ length: 9 }, rateLimited));
    const llm = expectFailed(run, {
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      httpCalls: 9,
      tries: 3,
    });
    expect(run.step.error?.details).toMatchObject({
      status: 429,
      providerStatus: 'RESOURCE_EXHAUSTED',
      retriesExhausted: true,
    });
    expect(run.step.error?.message).toBe(
      'gemini generateContent failed: HTTP 429 RESOURCE_EXHAUSTED: rate limited or quota exhausted',
    );
    expect(run.sleeps).toEqual([1_000, 2_000, 1_000, 2_000, 1_000, 2_000]);
    expect(llm).toMatchObject({ attempts: { total: 1 }, repair: { attempted: false }, calls: 3 });
    expect(llm).not.toHaveProperty('finishReason');
  });

  it('10. 503 twice then success → SUCCEEDED after three HTTP calls', async () => {
    const run = await scenario([overloaded(), overloaded(), valid('resp-10')]);
    expectSucceeded(run, {
      httpCalls: 3,
      attempts: 1,
      requestId: 'resp-10',
      repair: { attempted: false },
    });
    expect(run.sleeps).toEqual([1_000, 2_000]);
  });

  it('10b. 503 on every try → FAILED LLM_UNAVAILABLE after 9 calls', async () => {
    const run = await scenario(Array.from({ length: 9 }, overloaded));
    const llm = expectFailed(run, {
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      httpCalls: 9,
      tries: 3,
    });
    expect(run.step.error?.details).toMatchObject({
      status: 503,
      providerStatus: 'UNAVAILABLE',
      retriesExhausted: true,
    });
    expect(llm).toMatchObject({ attempts: { total: 1 }, calls: 3 });
  });
});
