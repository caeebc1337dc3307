import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { createBackends } from '@tda/backends';
import type { ErrorCode, FlowRun, FlowStep } from '@tda/contracts';
import { GeminiLlmClient } from '@tda/llm';
import {
  FakeGeminiServer,
  fakeReply,
  generateContentBody,
  textResponseBody,
  validReportOutput,
  type FakeGeminiReply,
} from '@tda/llm/testing';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { bootstrapWorker, type StepHarnessPolicy } from '@tda/worker-kit';
import {
  CountingArtifactStore,
  CountingFlowRunStore,
  deliverStep,
  memoryWorkerEnv,
} from '@tda/worker-kit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { llmReportWorker, type LlmReportOverrides } from './llm-report.worker';
import {
  countingHandler,
  flowFixture,
  parseReport,
  REPORT_1W,
  runLlmReportStep,
  snapshot,
  type HandlerCalls,
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
  options: Pick<RunLlmReportStepOptions, 'policy' | 'runtime'> = {},
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
    runtime: {
      ...options.runtime,
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

/** `outputs.execution.llm.usage`: the usage of every answer, summed. */
function usageOf(answers: number): Record<string, number> {
  return {
    promptTokenCount: answers * USAGE.promptTokenCount,
    candidatesTokenCount: answers * USAGE.candidatesTokenCount,
    totalTokenCount: answers * USAGE.totalTokenCount,
    thoughtsTokenCount: 0,
  };
}

function expectSucceeded(
  run: Scenario,
  expected: {
    httpCalls: number;
    /** Requests that got an answer (default: the model attempts). */
    answered?: number;
    attempts: number;
    requestId: string;
    repair: Record<string, unknown>;
  },
): void {
  const answered = expected.answered ?? expected.attempts;
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
    requests: expected.httpCalls,
    answered,
    usage: usageOf(answered),
  });
  // The harness ran the handler once: a step that asked the model is never re-executed.
  expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
  expect(run.outcome.tries).toBe(1);
  expectTiming(step);
  expectNoLeak(run);
}

function expectFailed(
  run: Scenario,
  expected: { code: ErrorCode; retryable: boolean; httpCalls: number },
): Record<string, unknown> {
  const { step } = run;
  expect(run.outcome).toMatchObject({ kind: 'failed', status: 'FAILED', errorCode: expected.code });
  expect(step.status).toBe('FAILED');
  expect(step.error).toMatchObject({ code: expected.code, retryable: expected.retryable });
  expect(server.callCount).toBe(expected.httpCalls);
  expect(run.bytes).toBeNull();
  expect(step.outputs.gcs_uri).toBeUndefined();
  // Every failure after the model was asked is final: one handler execution, no harness retry.
  expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
  expect(run.outcome.tries).toBe(1);
  expect([run.registry.getSchemaCalls, run.registry.getPromptCalls]).toEqual([1, 1]);
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
      requests: 2,
      answered: 2,
      usage: usageOf(2),
    });
    expect(llm).not.toHaveProperty('calls');
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
      requests: 1,
      answered: 1,
      usage: usageOf(1),
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
      requests: 1,
      answered: 1,
      usage: usageOf(1),
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
      requests: 2,
      answered: 2,
      usage: usageOf(2),
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
      requests: 2,
      answered: 2,
    });
  });

  it('8. answers slower than the request deadline → FAILED LLM_TIMEOUT after 3 aborted calls (the runtime’s tries, never repeated by the harness)', async () => {
    // A valid answer, but only after 5 s.
    const late = fakeReply.ok(textResponseBody(reportJson(`## late ${CANARY}`)), {
      delayMs: 5_000,
    });
    const run = await scenario(
      Array.from({ length: 3 }, () => late),
      {
        runtime: { requestDeadlineMs: 200, finalizeBudgetMs: 100 },
        policy: { timeoutMs: 8_000 },
      },
    );
    const llm = expectFailed(run, {
      code: 'LLM_TIMEOUT',
      retryable: true,
      httpCalls: 3,
    });
    expect(run.step.error?.details).toMatchObject({
      deadlineMs: 200,
      retriesExhausted: true,
      attempt: 1,
      tries: 3,
    });
    // The client gave up on every request (the server saw it go away) and nothing hung: well
    // below the 8 s step timeout (3 × 200 ms plus overhead).
    await expectEventually(() => expect(server.requests.every((r) => r.aborted)).toBe(true), {
      timeoutMs: 5_000,
    });
    expect(run.elapsedMs).toBeLessThan(4_000);
    expect(run.sleeps).toEqual([1_000, 2_000]);
    // No response was received: every request is counted, nothing else is known.
    expect(llm).toEqual({
      provider: 'gemini',
      modelName: MODEL,
      promptId: 'prompt_week_v1',
      schemaId: 'llm_report_output_v1',
      schemaSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      attempts: { total: 1 },
      repair: { attempted: false },
      requests: 3,
      answered: 0,
      usage: usageOf(0),
    });
  });

  it('8b. a step timeout shorter than the request deadline bounds the call; no retry fits above the finalize reserve, nothing runs again', async () => {
    // Step budget 2 s, reserve 1 s, request deadline 10 s: the one call gets ≈ 1 s, and a retry
    // would start inside the reserve. The timeout is final: the harness does not execute again.
    const run = await scenario([fakeReply.hang()], {
      runtime: { requestDeadlineMs: 10_000, finalizeBudgetMs: 1_000 },
      policy: { timeoutMs: 2_000 },
    });
    const llm = expectFailed(run, {
      code: 'LLM_TIMEOUT',
      retryable: true,
      httpCalls: 1,
    });
    expect(run.step.error?.details).toMatchObject({
      retryStoppedBy: 'time_budget',
      attempt: 1,
      tries: 1,
    });
    await expectEventually(() => expect(server.requests[0]?.aborted).toBe(true), {
      timeoutMs: 5_000,
    });
    expect(run.elapsedMs).toBeLessThan(5_000); // far below the 10 s request deadline
    expect(run.sleeps).toEqual([]);
    expect(llm).toMatchObject({
      attempts: { total: 1 },
      requests: 1,
      answered: 0,
      usage: usageOf(0),
    });
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

  it('9b. 429 on every try → FAILED LLM_UNAVAILABLE after the runtime’s 3 tries, no harness retry', async () => {
    const run = await scenario(Array.from({ length: 3 }, rateLimited));
    const llm = expectFailed(run, {
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      httpCalls: 3,
    });
    expect(run.step.error?.details).toMatchObject({
      status: 429,
      providerStatus: 'RESOURCE_EXHAUSTED',
      retriesExhausted: true,
      tries: 3,
    });
    expect(run.step.error?.message).toBe(
      'gemini generateContent failed: HTTP 429 RESOURCE_EXHAUSTED: rate limited or quota exhausted',
    );
    expect(run.sleeps).toEqual([1_000, 2_000]);
    expect(llm).toMatchObject({
      attempts: { total: 1 },
      repair: { attempted: false },
      requests: 3,
      answered: 0,
      usage: usageOf(0),
    });
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

  it('10b. 503 on every try → FAILED LLM_UNAVAILABLE after 3 calls', async () => {
    const run = await scenario(Array.from({ length: 3 }, overloaded));
    const llm = expectFailed(run, {
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      httpCalls: 3,
    });
    expect(run.step.error?.details).toMatchObject({
      status: 503,
      providerStatus: 'UNAVAILABLE',
      retriesExhausted: true,
      tries: 3,
    });
    expect(llm).toMatchObject({ attempts: { total: 1 }, requests: 3, answered: 0 });
    expect(run.sleeps).toEqual([1_000, 2_000]);
  });
});

// -- seed 002 fixes, through the LLM worker as its main boots it ---------------------------------

interface WorkerScenario {
  step: FlowStep;
  stored: FlowRun;
  log: MemoryLogger;
  store: CountingFlowRunStore;
  /** Artifact reads of the delivery (the fixture's puts are not counted). */
  artifacts: CountingArtifactStore;
  calls: HandlerCalls;
  /** The worker's own prompt registry, spied. */
  registry: { getPrompt: number; getSchema: number };
  sleeps: number[];
  bytes: Buffer | null;
  reportUri: string;
}

/**
 * The real LLM worker (bootstrapWorker(llmReportWorker): its config schema from an env with the
 * fake server's URL and key, its Gemini client, its seeded registry, its harness policy, the pull
 * transport on in-process backends) executing the 1w report of a fresh flow-1 run, published as
 * the orchestrator would. The handler is counted through `decorate`, the artifact store through
 * `createBackends`, the registry by spies on the runtime's own registry.
 */
async function throughWorker(
  replies: FakeGeminiReply[],
  options: {
    policy?: Partial<StepHarnessPolicy>;
    runtime?: NonNullable<LlmReportOverrides['runtime']>;
    /** Runs inside the pipeline's backoff sleep (after it was recorded). */
    onSleep?: (ms: number) => void;
  } = {},
): Promise<WorkerScenario> {
  server.enqueue(...replies);
  const memory = await memoryWorkerEnv({
    GEMINI_API_KEY: API_KEY,
    TDA_GEMINI_BASE_URL: server.baseUrl,
  });
  const log = createMemoryLogger();
  const calls: HandlerCalls = { executions: 0, recoveries: 0 };
  const sleeps: number[] = [];
  let counted: { store: CountingFlowRunStore; artifacts: CountingArtifactStore } | undefined;
  const handle = await bootstrapWorker(llmReportWorker, {
    env: memory.env,
    logger: log.logger,
    ...(options.policy === undefined ? {} : { policy: options.policy }),
    overrides: {
      runtime: {
        ...options.runtime,
        sleep: async (ms: number) => {
          sleeps.push(ms);
          options.onSleep?.(ms);
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
    const { store, artifacts } = counted;
    expect(handle.handler.runtime.provider).toBe('gemini');
    const getPrompt = vi.spyOn(handle.handler.runtime.registry, 'getPrompt');
    const getSchema = vi.spyOn(handle.handler.runtime.registry, 'getSchema');
    const fixture = await flowFixture(new Date());
    for (const [uri, data] of await snapshot(fixture.artifacts)) {
      await artifacts.inner.put(uri, data, { contentType: 'application/octet-stream' });
    }
    await store.inner.create(fixture.run);
    await deliverStep(
      handle,
      { runId: fixture.run.runId, stepId: REPORT_1W, stepType: 'LLM_REPORT' },
      { store: store.inner },
    );
    await handle.close(); // drains the delivery: its step event and ack are done
    const stored = (await store.inner.get(fixture.run.runId))?.run;
    const step = stored?.steps[REPORT_1W];
    if (stored === undefined || step === undefined) throw new Error('report step vanished');
    const exists = await artifacts.inner.exists(fixture.reportUri);
    return {
      step,
      stored,
      log,
      store,
      artifacts,
      calls,
      registry: { getPrompt: getPrompt.mock.calls.length, getSchema: getSchema.mock.calls.length },
      sleeps,
      bytes: exists ? await artifacts.inner.read(fixture.reportUri) : null,
      reportUri: fixture.reportUri,
    };
  } finally {
    await handle.close();
    await memory.cleanup();
  }
}

/** Neither the model's (nor the provider's) text nor the key reached logs or the run. */
function expectNoWorkerLeak(run: WorkerScenario): void {
  for (const [what, serialized] of [
    ['logs', JSON.stringify(run.log.records)],
    ['store writes', JSON.stringify(run.store.recorded.map((u) => u.patch))],
    ['run document', JSON.stringify(run.stored)],
  ] as const) {
    expect(serialized.includes(CANARY), `${what} contain the canary`).toBe(false);
    expect(serialized.includes(API_KEY), `${what} contain the API key`).toBe(false);
  }
}

/** One execution's worth of reads: the profile's schema and the prompt; the OHLCV export, the
 * charts manifest, its PNG and the 1M report. */
function expectReadOnce(run: WorkerScenario): void {
  expect(run.registry).toEqual({ getSchema: 1, getPrompt: 1 });
  expect(run.artifacts.reads).toBe(4);
}

describe('LLM_REPORT worker: seed 002 fixes (bootstrapWorker × real Gemini SDK × scripted server)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('(a) a repair call that stays unavailable ends FAILED with its code: one repair, ≤ 3 requests per model attempt, one handler execution', async () => {
    const run = await throughWorker([
      overloaded(),
      overloaded(),
      text(`not json ${CANARY}`, 'resp-a-bad'),
      overloaded(),
      overloaded(),
      overloaded(),
    ]);
    const { step } = run;
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      details: {
        status: 503,
        providerStatus: 'UNAVAILABLE',
        attempt: 2,
        tries: 3,
        retriesExhausted: true,
        firstAttempt: { reasonKind: 'json_parse' },
      },
    });
    // 3 requests for the first attempt (2 × 503, then an invalid answer), 3 for the repair.
    expect(server.callCount).toBe(6);
    const repairParts = server.requests.map((r) => r.body?.contents?.[0]?.parts?.length ?? 0);
    expect(new Set(repairParts.slice(0, 3)).size).toBe(1);
    expect(new Set(repairParts.slice(3)).size).toBe(1);
    expect(repairParts[3]).toBe((repairParts[0] ?? 0) + 1);
    expect(run.sleeps).toEqual([1_000, 2_000, 1_000, 2_000]);
    expect(run.log.withEvent('structured_output_repair_attempt_started')).toHaveLength(1);
    expect(
      run.log.withEvent('structured_output_repair_attempt_finished').map((r) => r['status']),
    ).toEqual(['provider_error']);
    // final: the harness executed the handler once and read the registry and context once
    expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
    expectReadOnce(run);
    expect(run.bytes).toBeNull();
    expect(step.outputs.execution?.['llm']).toEqual({
      provider: 'gemini',
      modelName: MODEL,
      promptId: 'prompt_week_v1',
      schemaId: 'llm_report_output_v1',
      schemaSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      requests: 6,
      answered: 1,
      attempts: { total: 2 },
      repair: { attempted: true, reasonKind: 'json_parse' },
      usage: usageOf(1),
      // the last answer received: the invalid first one
      finishReason: 'STOP',
      modelVersion: MODEL_VERSION,
      requestId: 'resp-a-bad',
      usageMetadata: USAGE,
    });
    expectNoWorkerLeak(run);
  });

  it('(b) outputs.execution.llm counts every request, answer and the repair, with the usage summed over the answers', async () => {
    const firstUsage = {
      promptTokenCount: 1000,
      candidatesTokenCount: 200,
      totalTokenCount: 1300,
      thoughtsTokenCount: 100,
    };
    const run = await throughWorker([
      rateLimited(),
      fakeReply.ok(
        generateContentBody({
          usageMetadata: firstUsage,
          modelVersion: MODEL_VERSION,
          responseId: 'resp-b-bad',
          candidates: [{ parts: [{ text: `{"summary": ${CANARY}` }], finishReason: 'STOP' }],
        }),
      ),
      overloaded(),
      valid('resp-b'),
    ]);
    const { step } = run;
    expect(step.error).toBeUndefined();
    expect(step.status).toBe('SUCCEEDED');
    expect(server.callCount).toBe(4);
    expect(run.sleeps).toEqual([1_000, 1_000]);
    expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
    expectReadOnce(run);
    const report = parseReport(run.bytes);
    expect(step.outputs.gcs_uri).toBe(run.reportUri);
    expect(step.outputs.execution?.['llm']).toEqual({
      provider: 'gemini',
      modelName: MODEL,
      promptId: 'prompt_week_v1',
      schemaId: 'llm_report_output_v1',
      schemaSha256: report.metadata.llm.schemaSha256,
      requests: 4,
      answered: 2,
      attempts: { total: 2 },
      repair: { attempted: true, reasonKind: 'json_parse' },
      usage: {
        promptTokenCount: firstUsage.promptTokenCount + USAGE.promptTokenCount,
        candidatesTokenCount: firstUsage.candidatesTokenCount + USAGE.candidatesTokenCount,
        totalTokenCount: firstUsage.totalTokenCount + USAGE.totalTokenCount,
        thoughtsTokenCount: firstUsage.thoughtsTokenCount,
      },
      // the accepted answer's facts
      finishReason: 'STOP',
      modelVersion: MODEL_VERSION,
      requestId: 'resp-b',
      usageMetadata: USAGE,
    });
    // The report file keeps the accepted answer's usage (its contract), not the totals.
    expect(report.metadata.llm).toMatchObject({
      attempts: { total: 2 },
      requestId: 'resp-b',
      usageMetadata: USAGE,
    });
    expectNoWorkerLeak(run);
  });

  it('(c) the finalize reserve reached: the guardrail’s LLM_TIMEOUT is final, nothing is read or executed again', async () => {
    // Only Date is faked (and keeps moving): sockets, the broker and the harness timers are real.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    // Step 30 s, reserve 10 s. The first request is a 503; its 1 s backoff fits (29 s left), but
    // the process stalls 25 s in it: when the retry would start, only ≈ 4 s are left.
    const run = await throughWorker([overloaded()], {
      policy: { timeoutMs: 30_000 },
      runtime: { finalizeBudgetMs: 10_000, requestDeadlineMs: 5_000 },
      onSleep: () => {
        vi.setSystemTime(Date.now() + 25_000);
      },
    });
    const { step } = run;
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({
      code: 'LLM_TIMEOUT',
      retryable: true,
      details: { reason: 'finalize_budget_guardrail', attempt: 1, finalizeBudgetMs: 10_000 },
    });
    expect(step.error?.message).toMatch(
      /^not starting model attempt 1: [0-9.]+ s left, below the 10 s finalize budget$/,
    );
    expect(step.error?.details?.['remainingMs']).toBeLessThan(10_000);
    expect(step.error?.details).not.toHaveProperty('tries');
    expect(server.callCount).toBe(1);
    expect(run.sleeps).toEqual([1_000]);
    // Not executed again (an in-process retry would re-read the registry and the context and
    // meet the same guardrail): one execution, one read of each.
    expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
    expectReadOnce(run);
    expect(step.outputs.execution?.['llm']).toMatchObject({
      requests: 1,
      answered: 0,
      attempts: { total: 1 },
      repair: { attempted: false },
      usage: usageOf(0),
    });
    expect(run.bytes).toBeNull();
    expectNoWorkerLeak(run);
  });
});
