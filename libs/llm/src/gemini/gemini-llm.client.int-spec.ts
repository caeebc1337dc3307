import { createMemoryLogger, describeError, logEvent } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { LlmCallError, type LlmRequest } from '../llm-client.port';
import {
  FakeGeminiServer,
  fakeReply,
  generateContentBody,
  textResponseBody,
} from '../testing/fake-gemini-server';
import { GeminiLlmClient } from './gemini-llm.client';
import { createLlmClientFromConfig } from './llm-env';

/**
 * The REAL @google/genai client against a local generateContent fake (no network, no emulator):
 * request mapping, response mapping, deadline, error mapping, one HTTP call per generate().
 */

const KEY = 'AIzaSy-int-test-secret-0123456789abcdef';
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const REPORT_JSON = '{"summary":{"markdown":"# BTC"},"details":{}}';

const console_ = { lines: [] as string[] };

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'gemini-test',
    systemInstruction: 'You are a careful market analyst.',
    contents: [{ text: 'Analyse BTCUSDT.' }],
    generationConfig: { responseMimeType: 'application/json' },
    deadlineMs: 5_000,
    attempt: 1,
    ...overrides,
  };
}

async function callError(promise: Promise<unknown>): Promise<LlmCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LlmCallError) return error;
    throw new Error(`expected an LlmCallError, got ${String(error)}`);
  }
  throw new Error('expected generate() to reject');
}

let server: FakeGeminiServer;
let client: GeminiLlmClient;

beforeAll(async () => {
  server = await FakeGeminiServer.start({ apiKey: KEY });
  client = new GeminiLlmClient({ apiKey: KEY, baseUrl: server.baseUrl });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.reset();
  console_.lines.length = 0;
  // The SDK itself writes warnings with console.*; capture them to prove the key never shows.
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      console_.lines.push(args.map((arg) => String(arg)).join(' '));
    });
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('GeminiLlmClient request mapping', () => {
  it('sends the profile, schema, thinking config, inline PNG and system instruction in one call', async () => {
    const schema = {
      type: 'object',
      required: ['summary', 'details'],
      properties: { summary: { type: 'object' }, details: { type: 'object' } },
    };
    server.enqueue(fakeReply.ok(textResponseBody(REPORT_JSON)));
    const response = await client.generate(
      request({
        contents: [
          { text: 'Analyse BTCUSDT.' },
          { text: '## UserInput\n{"ohlcv":[]}' },
          { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
        ],
        generationConfig: {
          responseMimeType: 'application/json',
          temperature: 0.2,
          topP: 0.95,
          topK: 32,
          maxOutputTokens: 4096,
          stopSequences: ['<END>'],
          candidateCount: 1,
          responseJsonSchema: schema,
          thinkingConfig: { includeThoughts: true, thinkingLevel: 'low' },
        },
      }),
    );

    expect(server.callCount).toBe(1);
    const sent = server.lastRequest();
    expect(sent.path).toBe('/v1beta/models/gemini-test:generateContent');
    expect(sent.api).toBe('gemini');
    expect(sent.auth).toBe('api-key-header');
    expect(sent.headers['x-goog-api-key']).toBeUndefined();
    // The deadline travels to the server too (seconds, rounded up).
    expect(sent.headers['x-server-timeout']).toBe('5');
    expect(sent.body?.systemInstruction).toEqual({
      parts: [{ text: 'You are a careful market analyst.' }],
    });
    expect(sent.body?.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'Analyse BTCUSDT.' },
          { text: '## UserInput\n{"ohlcv":[]}' },
          { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
        ],
      },
    ]);
    expect(sent.body?.generationConfig).toEqual({
      responseMimeType: 'application/json',
      temperature: 0.2,
      topP: 0.95,
      topK: 32,
      maxOutputTokens: 4096,
      stopSequences: ['<END>'],
      candidateCount: 1,
      responseJsonSchema: schema,
      thinkingConfig: { includeThoughts: true, thinkingLevel: 'low' },
    });

    expect(response).toEqual({
      candidates: [{ finishReason: 'STOP', parts: [{ text: REPORT_JSON }] }],
      text: REPORT_JSON,
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: 'fake-model-001',
      responseId: 'fake-response-1',
    });
  });

  it('adds no generation default the profile does not set', async () => {
    server.enqueue(fakeReply.ok(textResponseBody(REPORT_JSON)));
    await client.generate(request());
    expect(server.lastRequest().body?.generationConfig).toEqual({
      responseMimeType: 'application/json',
    });
    expect(Object.keys(server.lastRequest().body ?? {}).sort()).toEqual([
      'contents',
      'generationConfig',
      'systemInstruction',
    ]);
  });

  it('honours apiVersion and reaches the Vertex AI path with project and location', async () => {
    const vertex = new GeminiLlmClient({
      vertexai: { project: 'tda-test', location: 'europe-west4' },
      baseUrl: server.baseUrl,
      // A stand-in credential so no Application Default Credentials are looked up.
      googleAuthOptions: { apiKey: 'vertex-stand-in' },
    });
    server.enqueue(fakeReply.ok(textResponseBody(REPORT_JSON)));
    const response = await vertex.generate(request());
    expect(response.text).toBe(REPORT_JSON);
    const sent = server.lastRequest();
    expect(sent.path).toBe(
      '/v1beta1/projects/tda-test/locations/europe-west4/publishers/google/models/gemini-test:generateContent',
    );
    expect(sent).toMatchObject({ api: 'vertex', project: 'tda-test', location: 'europe-west4' });

    const v1 = new GeminiLlmClient({ apiKey: KEY, baseUrl: server.baseUrl, apiVersion: 'v1' });
    server.enqueue(fakeReply.ok(textResponseBody(REPORT_JSON)));
    await v1.generate(request());
    expect(server.lastRequest().path).toBe('/v1/models/gemini-test:generateContent');
  });

  it('is built by createLlmClientFromConfig with TDA_GEMINI_BASE_URL', async () => {
    const fromConfig = createLlmClientFromConfig({
      GEMINI_API_KEY: KEY,
      TDA_GEMINI_BASE_URL: server.baseUrl,
    });
    expect(fromConfig).not.toBeNull();
    server.enqueue(fakeReply.ok(textResponseBody(REPORT_JSON)));
    const response = await fromConfig?.generate(request());
    expect(response?.text).toBe(REPORT_JSON);
    expect(server.callCount).toBe(1);
  });
});

describe('GeminiLlmClient response mapping', () => {
  it('surfaces a SAFETY finishReason with its safety ratings', async () => {
    const safetyRatings = [
      { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
    ];
    server.enqueue(
      fakeReply.ok(
        generateContentBody({ candidates: [{ finishReason: 'SAFETY', safetyRatings }] }),
      ),
    );
    const response = await client.generate(request());
    expect(response.candidates).toEqual([{ finishReason: 'SAFETY', parts: [], safetyRatings }]);
    expect(response.text).toBeUndefined();
  });

  it('surfaces promptFeedback.blockReason when the prompt is blocked (no candidates)', async () => {
    server.enqueue(
      fakeReply.ok(
        generateContentBody({
          promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] },
          usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 },
        }),
      ),
    );
    const response = await client.generate(request());
    expect(response).toEqual({
      candidates: [],
      promptFeedback: { blockReason: 'SAFETY' },
      usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 },
    });
  });

  it('surfaces MAX_TOKENS with the truncated text', async () => {
    server.enqueue(
      fakeReply.ok(
        generateContentBody({
          candidates: [{ parts: [{ text: '{"summary":{"mark' }], finishReason: 'MAX_TOKENS' }],
        }),
      ),
    );
    const response = await client.generate(request());
    expect(response.candidates[0]?.finishReason).toBe('MAX_TOKENS');
    expect(response.text).toBe('{"summary":{"mark');
  });

  it('maps an empty answer to no candidates and no text', async () => {
    server.enqueue(fakeReply.ok({}));
    const response = await client.generate(request());
    expect(response).toEqual({ candidates: [] });
  });

  it('keeps a candidate without text parts; the SDK text fallback is undefined', async () => {
    server.enqueue(
      fakeReply.ok(
        generateContentBody({
          candidates: [
            {
              parts: [{ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }],
              finishReason: 'STOP',
            },
          ],
        }),
      ),
    );
    const response = await client.generate(request());
    expect(response.candidates).toEqual([{ finishReason: 'STOP', parts: [{}] }]);
    expect(response.text).toBeUndefined();
  });

  it('flags thought parts; the SDK text leaves them out', async () => {
    server.enqueue(
      fakeReply.ok(
        generateContentBody({
          candidates: [
            {
              parts: [
                { text: 'Looking at the weekly RSI…', thought: true },
                { text: '{"summary":' },
                { text: '{"markdown":"x"},"details":{}}' },
              ],
              finishReason: 'STOP',
            },
          ],
          usageMetadata: {
            promptTokenCount: 100,
            candidatesTokenCount: 20,
            thoughtsTokenCount: 300,
            totalTokenCount: 420,
          },
        }),
      ),
    );
    const response = await client.generate(request());
    expect(response.candidates[0]?.parts).toEqual([
      { text: 'Looking at the weekly RSI…', thought: true },
      { text: '{"summary":' },
      { text: '{"markdown":"x"},"details":{}}' },
    ]);
    expect(response.text).toBe('{"summary":{"markdown":"x"},"details":{}}');
    expect(response.usageMetadata?.thoughtsTokenCount).toBe(300);

    // Only thoughts: no text at all.
    server.enqueue(
      fakeReply.ok(
        generateContentBody({
          candidates: [{ parts: [{ text: 'hmm', thought: true }], finishReason: 'STOP' }],
        }),
      ),
    );
    expect((await client.generate(request())).text).toBeUndefined();
  });

  it('does not follow a continuation token (one HTTP call per generate)', async () => {
    const continued = generateContentBody({ candidates: [{ parts: [{ text: '{"a":' }] }] });
    const first = continued['candidates'];
    if (!Array.isArray(first)) throw new Error('fixture');
    Object.assign(first[0] as object, { continuationToken: 'Y29udGludWU=' });
    server.enqueue(fakeReply.ok(continued), fakeReply.ok(textResponseBody('1}')));
    const response = await client.generate(request());
    expect(response.text).toBe('{"a":');
    expect(server.callCount).toBe(1);
    expect(server.remainingReplies).toBe(1);
  });
});

describe('GeminiLlmClient deadline', () => {
  const DEADLINE_MS = 300;

  it.each([
    ['no answer', fakeReply.hang()],
    ['headers but no body', fakeReply.stall()],
    [
      'an answer slower than the deadline',
      fakeReply.ok(textResponseBody(REPORT_JSON), { delayMs: 3_000 }),
    ],
  ])('rejects with LLM_TIMEOUT within ~the deadline on %s', async (_label, reply) => {
    server.enqueue(reply);
    const startedAt = performance.now();
    const error = await callError(client.generate(request({ deadlineMs: DEADLINE_MS })));
    const elapsed = performance.now() - startedAt;
    expect(error.code).toBe('LLM_TIMEOUT');
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ deadlineMs: DEADLINE_MS, model: 'gemini-test' });
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
    // Generous upper bound for a loaded 2-core machine; without the deadline this would be ≥ 3 s
    // (the delayed answer) or forever (hang).
    expect(elapsed).toBeLessThan(DEADLINE_MS + 1_500);
    expect(server.callCount).toBe(1);
    // The HTTP request is really cancelled, not left running in the background.
    await expectEventually(() => expect(server.lastRequest().aborted).toBe(true), {
      timeoutMs: 5_000,
    });
  });

  it('stops when the caller aborts, and does not call at all when already aborted', async () => {
    server.enqueue(fakeReply.hang());
    const controller = new AbortController();
    const pending = client.generate(request({ signal: controller.signal, deadlineMs: 30_000 }));
    await expectEventually(() => expect(server.callCount).toBe(1));
    controller.abort();
    const error = await callError(pending);
    expect(error.code).toBe('LLM_TIMEOUT');
    expect(error.details).toMatchObject({ aborted: true });
    await expectEventually(() => expect(server.lastRequest().aborted).toBe(true));

    server.reset();
    const before = await callError(client.generate(request({ signal: AbortSignal.abort() })));
    expect(before.details).toMatchObject({ aborted: true });
    const expired = await callError(client.generate(request({ deadlineMs: 0 })));
    expect(expired.code).toBe('LLM_TIMEOUT');
    expect(server.callCount).toBe(0);
  });
});

describe('GeminiLlmClient errors', () => {
  it.each([
    [429, 'RESOURCE_EXHAUSTED'],
    [500, 'INTERNAL'],
    [502, 'UNAVAILABLE'],
    [503, 'UNAVAILABLE'],
    [504, 'DEADLINE_EXCEEDED'],
  ])('HTTP %i → LLM_UNAVAILABLE retryable, with no SDK retry', async (status, googleStatus) => {
    // If the SDK retried, it would consume the second (successful) reply and resolve.
    server.enqueue(
      fakeReply.error(status, googleStatus, 'try later'),
      fakeReply.ok(textResponseBody(REPORT_JSON)),
    );
    const error = await callError(client.generate(request()));
    expect(error.code).toBe('LLM_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ status, providerStatus: googleStatus });
    expect(error.message).toBe(
      `gemini generateContent failed: HTTP ${status} ${googleStatus}: ${status === 429 ? 'rate limited or quota exhausted' : 'provider unavailable'}`,
    );
    expect(server.callCount).toBe(1);
    expect(server.remainingReplies).toBe(1);
  });

  it('HTTP 400 INVALID_ARGUMENT and 404 → LLM_PROFILE_INVALID, not retryable', async () => {
    server.enqueue(
      fakeReply.error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload: responseJsonSchema.foo'),
    );
    const invalid = await callError(client.generate(request()));
    expect(invalid.code).toBe('LLM_PROFILE_INVALID');
    expect(invalid.retryable).toBe(false);
    expect(invalid.message).not.toContain('responseJsonSchema.foo');

    server.enqueue(fakeReply.error(404, 'NOT_FOUND', 'models/gemini-nope is not found'));
    const missing = await callError(client.generate(request({ model: 'gemini-nope' })));
    expect(missing.code).toBe('LLM_PROFILE_INVALID');
    expect(missing.message).toContain('model gemini-nope not found');
    expect(server.callCount).toBe(2);
  });

  it('HTTP 401 and a wrong key → LLM_UNAVAILABLE, not retryable, naming the setting only', async () => {
    server.enqueue(fakeReply.error(401, 'UNAUTHENTICATED', 'Request had invalid credentials'));
    const unauthenticated = await callError(client.generate(request()));
    expect(unauthenticated.code).toBe('LLM_UNAVAILABLE');
    expect(unauthenticated.retryable).toBe(false);
    expect(unauthenticated.message).toContain('GEMINI_API_KEY');

    const wrongKey = 'AIzaSy-wrong-key-fedcba9876543210';
    const wrong = new GeminiLlmClient({ apiKey: wrongKey, baseUrl: server.baseUrl });
    const rejected = await callError(wrong.generate(request()));
    expect(rejected.code).toBe('LLM_UNAVAILABLE');
    expect(rejected.retryable).toBe(false);
    expect(rejected.details).toMatchObject({ status: 400, reason: 'API_KEY_INVALID' });
    expect(JSON.stringify({ m: rejected.message, d: rejected.details })).not.toContain(wrongKey);
  });

  it('network failures → LLM_UNAVAILABLE retryable', async () => {
    server.enqueue(fakeReply.disconnect());
    const dropped = await callError(client.generate(request()));
    expect(dropped.code).toBe('LLM_UNAVAILABLE');
    expect(dropped.retryable).toBe(true);
    expect(server.callCount).toBe(1);

    const gone = await FakeGeminiServer.start();
    const url = gone.baseUrl;
    await gone.close();
    const refused = await callError(
      new GeminiLlmClient({ apiKey: KEY, baseUrl: url }).generate(request()),
    );
    expect(refused.code).toBe('LLM_UNAVAILABLE');
    expect(refused.retryable).toBe(true);
    expect(refused.details).toMatchObject({ network: 'ECONNREFUSED' });
  });

  it('never puts the API key into errors, details or logs', async () => {
    const memory = createMemoryLogger();
    const errors: LlmCallError[] = [];
    const scenarios = [
      // A provider message that echoes the key: it must be dropped, not relayed.
      fakeReply.error(400, 'INVALID_ARGUMENT', `API key ${KEY} cannot use this model`),
      fakeReply.error(403, 'PERMISSION_DENIED', `key=${KEY}`),
      fakeReply.error(503, 'UNAVAILABLE', `overloaded for ${KEY}`),
      fakeReply.disconnect(),
      fakeReply.hang(),
    ];
    for (const reply of scenarios) {
      server.enqueue(reply);
      const error = await callError(client.generate(request({ deadlineMs: 300 })));
      errors.push(error);
      logEvent(memory.logger, 'error', 'step_failed', { error: describeError(error) });
    }
    expect(errors.map((error) => error.code)).toEqual([
      'LLM_PROFILE_INVALID',
      'LLM_UNAVAILABLE',
      'LLM_UNAVAILABLE',
      'LLM_UNAVAILABLE',
      'LLM_TIMEOUT',
    ]);
    const exposed = [
      ...errors.map((error) => `${error.message} ${error.stack ?? ''} ${JSON.stringify(error)}`),
      JSON.stringify(memory.records),
      ...console_.lines,
      JSON.stringify(server.requests),
    ].join('\n');
    expect(exposed).not.toContain(KEY);
    expect(exposed).not.toContain(KEY.slice(0, 20));
  });
});
