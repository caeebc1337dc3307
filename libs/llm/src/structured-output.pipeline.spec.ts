import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { describe, expect, it } from 'vitest';
import { defaultReportSchema } from './default-registry';
import { LlmCallError, type LlmRequest } from './llm-client.port';
import { OutputSchemaValidatorCache } from './output-schema';
import {
  type LlmRequestTemplate,
  runStructuredOutput,
  type StructuredOutputFailure,
  type StructuredOutputResult,
  type StructuredOutputSuccess,
} from './structured-output.pipeline';
import {
  emptyResponse,
  jsonResponse,
  manualClock,
  partsResponse,
  ScriptedLlmClient,
  type ScriptedStep,
  textResponse,
  validReportOutput,
} from './testing';
import { TimeBudget } from './time-budget';

const jsonSchema = defaultReportSchema().jsonSchema;
const validators = new OutputSchemaValidatorCache();
const schema = {
  schemaId: 'llm_report_output_v1',
  jsonSchema,
  validator: validators.get(jsonSchema),
};

const REQUEST: LlmRequestTemplate = {
  model: 'gemini-2.5-flash',
  systemInstruction: 'You are an analyst.',
  contents: [{ text: 'Write the report.' }],
  generationConfig: { responseMimeType: 'application/json', responseJsonSchema: jsonSchema },
};

interface Harness {
  client: ScriptedLlmClient;
  clock: ReturnType<typeof manualClock>;
  memory: MemoryLogger;
  run: (request?: LlmRequestTemplate) => Promise<StructuredOutputResult>;
}

function harness(steps: ScriptedStep[], options: { elapsedMs?: number } = {}): Harness {
  const clock = manualClock();
  const budget = new TimeBudget({ startedAt: clock.now().getTime(), clock: clock.now });
  clock.advance(options.elapsedMs ?? 0);
  const client = new ScriptedLlmClient(steps);
  const memory = createMemoryLogger();
  return {
    client,
    clock,
    memory,
    run: (request = REQUEST) =>
      runStructuredOutput({
        client,
        request,
        schema,
        budget,
        sleep: clock.sleep,
        logger: memory.logger,
      }),
  };
}

function ok(result: StructuredOutputResult): StructuredOutputSuccess {
  if (!result.ok)
    throw new Error(`expected success, got ${result.error.code}: ${result.error.message}`);
  return result;
}

function failed(result: StructuredOutputResult): StructuredOutputFailure {
  if (result.ok) throw new Error('expected a failure');
  return result;
}

function textOf(request: LlmRequest | undefined, index: number): string {
  const part = request?.contents[index];
  return part !== undefined && 'text' in part ? part.text : '';
}

const unavailable = (): LlmCallError =>
  new LlmCallError('LLM_UNAVAILABLE', 'HTTP 503 UNAVAILABLE', true, { status: 503 });
const rateLimited = (): LlmCallError =>
  new LlmCallError('LLM_UNAVAILABLE', 'HTTP 429 RESOURCE_EXHAUSTED', true, { status: 429 });

describe('runStructuredOutput', () => {
  it('accepts valid JSON on the first call', async () => {
    const h = harness([
      jsonResponse(validReportOutput(), {
        responseId: 'r-1',
        modelVersion: 'gemini-2.5-flash-001',
      }),
    ]);
    const result = ok(await h.run());
    expect(result.output).toEqual(validReportOutput());
    expect(result).toMatchObject({
      attempts: 1,
      calls: 1,
      finishReason: 'STOP',
      modelVersion: 'gemini-2.5-flash-001',
      requestId: 'r-1',
      repair: { attempted: false },
    });
    expect(result.usageMetadata).toEqual({
      promptTokenCount: 100,
      candidatesTokenCount: 50,
      totalTokenCount: 150,
    });
    expect(result.diagnostics.textBytes).toBe(
      Buffer.byteLength(JSON.stringify(validReportOutput())),
    );
    expect(h.client.requests[0]).toMatchObject({
      attempt: 1,
      deadlineMs: 600_000,
      model: 'gemini-2.5-flash',
    });
    expect(h.memory.records).toEqual([]);
  });

  it('repairs invalid JSON with one more call and then succeeds (2 calls)', async () => {
    const h = harness([
      textResponse('{"summary": {"markdown": "cut'),
      jsonResponse(validReportOutput()),
    ]);
    const result = ok(await h.run());
    expect(result).toMatchObject({
      attempts: 2,
      calls: 2,
      repair: { attempted: true, reasonKind: 'json_parse' },
    });
    expect(result.usageTotals).toEqual({
      promptTokenCount: 200,
      candidatesTokenCount: 100,
      totalTokenCount: 300,
      thoughtsTokenCount: 0,
    });
    const repair = h.client.requests[1];
    expect(repair?.attempt).toBe(2);
    expect(repair?.contents.slice(0, 1)).toEqual(REQUEST.contents);
    const repairText = textOf(repair, 1);
    expect(repairText).toContain('kind=json_parse');
    expect(repairText).toContain(
      'Return ONLY one JSON object that matches the JSON Schema "llm_report_output_v1"',
    );
    expect(repairText).toContain('No Markdown, no code fences');
    expect(repairText).toContain('"required":["summary","details"]');
    expect(repairText).toContain('{"summary": {"markdown": "cut');
    const invalid = h.memory.withEvent('structured_output_invalid');
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({
      severity: 'WARNING',
      attempt: 1,
      reason: { kind: 'json_parse' },
      llm: { finishReason: 'STOP', schemaId: 'llm_report_output_v1' },
      diagnostics: { textBytes: 29 },
      policy: { finalizeBudgetSeconds: 120, remainingSeconds: 780, repairPlanned: true },
    });
    expect(h.memory.withEvent('structured_output_repair_attempt_started')[0]).toMatchObject({
      attempt: 1,
    });
    expect(h.memory.withEvent('structured_output_repair_attempt_finished')[0]).toMatchObject({
      attempt: 1,
      status: 'succeeded',
    });
  });

  it('fails with INVALID_STRUCTURED_OUTPUT when the repair is invalid too (2 calls)', async () => {
    const broken = { summary: { markdown: 'x' }, details: { trend: {} } };
    const h = harness([jsonResponse(broken), jsonResponse(broken)]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({ code: 'INVALID_STRUCTURED_OUTPUT', retryable: false });
    expect(result.error.message).toBe(
      'structured output invalid: kind=schema_validation finishReason=STOP; the repair attempt was invalid too',
    );
    expect(result.error.details).toMatchObject({
      schemaId: 'llm_report_output_v1',
      reasonKind: 'schema_validation',
      finishReason: 'STOP',
      repair: { attempted: true },
    });
    expect(result.error.details['validationErrors']).toContainEqual({
      path: '/details',
      keyword: 'required',
      message: "missing required property 'keyLevels'",
    });
    expect(result).toMatchObject({
      attempts: 2,
      calls: 2,
      repair: { attempted: true, reasonKind: 'schema_validation' },
      // the last response's metadata, for the FAILED step's outputs.execution
      finishReason: 'STOP',
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 50, totalTokenCount: 150 },
    });
    expect(textOf(h.client.requests[1], 1)).toContain(
      "- /details: missing required property 'keyLevels' (required)",
    );
    expect(h.memory.withEvent('structured_output_invalid').map((r) => r['attempt'])).toEqual([
      1, 2,
    ]);
    expect(h.memory.withEvent('structured_output_repair_attempt_finished')[0]).toMatchObject({
      attempt: 1,
      status: 'invalid',
    });
  });

  it('maps finishReason SAFETY to LLM_SAFETY_BLOCK without a repair (1 call)', async () => {
    const h = harness([
      textResponse('', {
        finishReason: 'SAFETY',
        safetyRatings: [
          { category: 'HARM_CATEGORY_X', probability: 'HIGH', blocked: true, extra: 'dropped' },
        ],
      }),
    ]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'LLM_SAFETY_BLOCK',
      retryable: false,
      details: {
        finishReason: 'SAFETY',
        safetyRatings: [{ category: 'HARM_CATEGORY_X', probability: 'HIGH', blocked: true }],
      },
    });
    expect(result).toMatchObject({
      attempts: 1,
      calls: 1,
      finishReason: 'SAFETY',
      repair: { attempted: false },
    });
    expect(h.memory.withEvent('structured_output_repair_attempt_started')).toEqual([]);
  });

  it('maps a prompt blockReason to LLM_SAFETY_BLOCK (1 call)', async () => {
    const h = harness([emptyResponse({ blockReason: 'PROHIBITED_CONTENT' })]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'LLM_SAFETY_BLOCK',
      details: { blockReason: 'PROHIBITED_CONTENT' },
    });
    expect(h.client.calls).toBe(1);
  });

  it('treats MAX_TOKENS truncation as invalid output, even when the text parses, and repairs it', async () => {
    const h = harness([
      jsonResponse(validReportOutput(), { finishReason: 'MAX_TOKENS' }),
      jsonResponse(validReportOutput()),
    ]);
    const result = ok(await h.run());
    expect(result).toMatchObject({
      attempts: 2,
      repair: { attempted: true, reasonKind: 'incomplete_output' },
    });
    expect(textOf(h.client.requests[1], 1)).toContain('It was cut off before the end');
    expect(h.memory.withEvent('structured_output_invalid')[0]).toMatchObject({
      llm: { finishReason: 'MAX_TOKENS' },
      reason: { kind: 'incomplete_output' },
    });
  });

  it('fails a truncated output twice with INVALID_STRUCTURED_OUTPUT', async () => {
    const h = harness([
      textResponse('{"summ', { finishReason: 'MAX_TOKENS' }),
      textResponse('{"summary":', { finishReason: 'MAX_TOKENS' }),
    ]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'INVALID_STRUCTURED_OUTPUT',
      details: { reasonKind: 'incomplete_output', finishReason: 'MAX_TOKENS' },
    });
    expect(result.finishReason).toBe('MAX_TOKENS');
  });

  it('treats a response without candidates as missing_text and repairs it', async () => {
    const h = harness([emptyResponse(), jsonResponse(validReportOutput())]);
    const result = ok(await h.run());
    expect(result.repair).toEqual({ attempted: true, reasonKind: 'missing_text' });
    expect(h.memory.withEvent('structured_output_invalid')[0]).toMatchObject({
      reason: { kind: 'missing_text' },
      diagnostics: { textBytes: 0 },
    });
  });

  it('uses response.text when the candidate has no text parts', async () => {
    const h = harness([
      partsResponse([{ thought: true, text: 'plan' }], {
        responseText: JSON.stringify(validReportOutput()),
      }),
    ]);
    expect(ok(await h.run()).attempts).toBe(1);
  });

  it('treats empty text as missing_text (no fallback past an empty text part)', async () => {
    const h = harness([textResponse(''), textResponse('')]);
    const result = failed(await h.run());
    expect(result.error.details).toMatchObject({ reasonKind: 'missing_text', textBytes: 0 });
  });

  it('does not strip code fences: fenced JSON is a json_parse failure', async () => {
    const h = harness([
      textResponse(`\`\`\`json\n${JSON.stringify(validReportOutput())}\n\`\`\``),
      jsonResponse(validReportOutput()),
    ]);
    expect(ok(await h.run()).repair.reasonKind).toBe('json_parse');
  });

  it('retries a 429 with backoff and succeeds (attempt 1, 2 calls)', async () => {
    const h = harness([rateLimited(), jsonResponse(validReportOutput())]);
    const result = ok(await h.run());
    expect(result).toMatchObject({ attempts: 1, calls: 2 });
    expect(h.clock.sleeps).toEqual([1_000]);
    expect(h.client.requests.map((r) => r.attempt)).toEqual([1, 1]);
    // the second try gets the deadline left after the backoff
    expect(h.client.requests[1]?.deadlineMs).toBe(600_000);
  });

  it('gives up after 3 tries of 503 with LLM_UNAVAILABLE (1 s, 2 s backoff)', async () => {
    const h = harness([unavailable(), unavailable(), unavailable()]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      details: { status: 503, tries: 3, retriesExhausted: true },
    });
    expect(result).toMatchObject({ attempts: 1, calls: 3 });
    expect(h.clock.sleeps).toEqual([1_000, 2_000]);
  });

  it('does not retry a non-retryable provider error', async () => {
    const h = harness([
      new LlmCallError('LLM_PROFILE_INVALID', 'HTTP 400 INVALID_ARGUMENT', false),
    ]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({ code: 'LLM_PROFILE_INVALID', retryable: false });
    expect(h.client.calls).toBe(1);
  });

  it('stops retrying when the backoff would eat into the finalize budget', async () => {
    // 780 - 659.5 = 120.5 s left: a 1 s backoff would leave less than the 120 s reserve
    const h = harness([unavailable()], { elapsedMs: 659_500 });
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'LLM_UNAVAILABLE',
      details: { retryStoppedBy: 'time_budget' },
    });
    expect(h.clock.sleeps).toEqual([]);
  });

  it('never starts a call below the finalize budget: LLM_TIMEOUT without calling', async () => {
    const h = harness([jsonResponse(validReportOutput())], { elapsedMs: 660_001 });
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'LLM_TIMEOUT',
      retryable: true,
      details: { reason: 'finalize_budget_guardrail', finalizeBudgetMs: 120_000 },
    });
    expect(result).toMatchObject({ attempts: 0, calls: 0 });
    expect(h.client.calls).toBe(0);
  });

  it('skips the repair when not enough time is left above the finalize budget', async () => {
    // 10 s gone before the call, the call itself takes its full 600 s: 170 s left, only 50 s
    // above the 120 s reserve (the repair needs 60 s)
    const h = harness([], { elapsedMs: 10_000 });
    const slow = new ScriptedLlmClient([
      () => {
        h.clock.advance(600_000);
        return textResponse('not json');
      },
    ]);
    const budget = new TimeBudget({
      startedAt: h.clock.now().getTime() - 10_000,
      clock: h.clock.now,
    });
    const result = failed(
      await runStructuredOutput({
        client: slow,
        request: REQUEST,
        schema,
        budget,
        sleep: h.clock.sleep,
        logger: h.memory.logger,
      }),
    );
    expect(result.error).toMatchObject({
      code: 'INVALID_STRUCTURED_OUTPUT',
      details: { repair: { attempted: false, skippedReason: 'insufficient_time' } },
    });
    expect(result).toMatchObject({
      attempts: 1,
      calls: 1,
      repair: { attempted: false, skippedReason: 'insufficient_time' },
    });
    expect(slow.calls).toBe(1);
    expect(slow.requests[0]?.deadlineMs).toBe(600_000);
    expect(h.memory.withEvent('structured_output_invalid')[0]).toMatchObject({
      policy: { repairPlanned: false, remainingSeconds: 170 },
    });
    expect(h.memory.withEvent('structured_output_repair_attempt_started')).toEqual([]);
  });

  it('honours a custom repair window', async () => {
    // 160 s left: 40 s above the reserve, enough for a 30 s window, not for the default 60 s
    const h = harness([textResponse('nope'), jsonResponse(validReportOutput())], {
      elapsedMs: 620_000,
    });
    const budget = new TimeBudget({
      startedAt: h.clock.now().getTime() - 620_000,
      clock: h.clock.now,
    });
    const result = await runStructuredOutput({
      client: h.client,
      request: REQUEST,
      schema,
      budget,
      sleep: h.clock.sleep,
      policy: { minRepairWindowMs: 30_000 },
    });
    expect(ok(result).attempts).toBe(2);
    expect(h.client.requests[1]?.deadlineMs).toBe(40_000);
  });

  it('gives the repair call the deadline left by the budget', async () => {
    const h = harness([
      () => {
        h.clock.advance(300_000);
        return textResponse('nope');
      },
      jsonResponse(validReportOutput()),
    ]);
    ok(await h.run());
    expect(h.client.requests[1]?.deadlineMs).toBe(780_000 - 300_000 - 120_000);
  });

  it('returns the provider error of a failed repair call, keeping the first problem in details', async () => {
    const timeout = (): LlmCallError =>
      new LlmCallError('LLM_TIMEOUT', 'deadline of 600 s exceeded', true);
    const h = harness([textResponse('nope'), timeout(), timeout(), timeout()]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'LLM_TIMEOUT',
      retryable: true,
      details: { firstAttempt: { reasonKind: 'json_parse' } },
    });
    expect(result).toMatchObject({ attempts: 2, calls: 4, repair: { attempted: true } });
    expect(h.memory.withEvent('structured_output_repair_attempt_finished')[0]).toMatchObject({
      status: 'provider_error',
      code: 'LLM_TIMEOUT',
    });
  });

  it('maps a client that throws something else to INTERNAL_ERROR without its message', async () => {
    const h = harness([new TypeError('cannot read SECRET-PROMPT of undefined')]);
    const result = failed(await h.run());
    expect(result.error).toMatchObject({
      code: 'INTERNAL_ERROR',
      message: 'the LLM client failed unexpectedly (TypeError)',
    });
    expect(JSON.stringify(result)).not.toContain('SECRET-PROMPT');
  });

  it('does not call the model once the request signal is aborted', async () => {
    const h = harness([jsonResponse(validReportOutput())]);
    const controller = new AbortController();
    controller.abort();
    const result = failed(await h.run({ ...REQUEST, signal: controller.signal }));
    expect(result.error.code).toBe('CANCELLED');
    expect(h.client.calls).toBe(0);
  });
});

describe('runStructuredOutput privacy (canary)', () => {
  it('never puts prompt, context or model output text into logs, errors or diagnostics', async () => {
    const canary = 'CANARY-4f9c1e2a7b';
    const request: LlmRequestTemplate = {
      ...REQUEST,
      systemInstruction: `system ${canary}`,
      contents: [{ text: `prompt ${canary}` }, { text: `{"candles":"${canary}"}` }],
      context: { symbol: 'BTC-USDT', ohlcv: { note: canary } },
    };
    const leaked = {
      summary: { markdown: canary, [canary]: canary },
      details: { trend: { direction: canary } },
    };
    const outputs = [
      [textResponse(`${canary} not json`), jsonResponse(leaked)],
      [jsonResponse(leaked, { finishReason: 'MAX_TOKENS' }), textResponse(`{"${canary}": `)],
      [textResponse(canary, { finishReason: 'SAFETY' })],
    ];
    for (const steps of outputs) {
      const h = harness(steps);
      const result = await h.run(request);
      expect(result.ok).toBe(false);
      const everything = JSON.stringify({ records: h.memory.records, result });
      expect(everything).not.toContain(canary);
      expect(everything).not.toContain('CANARY');
    }
    // the repair call itself may carry the previous text: in memory only, to the model
    const h = harness([textResponse(`${canary} not json`), jsonResponse(validReportOutput())]);
    const result = ok(await h.run(request));
    expect(textOf(h.client.requests[1], 2)).toContain(canary);
    const { output: _output, response: _response, ...rest } = result;
    expect(JSON.stringify({ records: h.memory.records, rest })).not.toContain(canary);
  });
});

describe('runStructuredOutput with a domain check (the step’s invariants)', () => {
  const CANARY = 'CANARY-check-7f3a';
  /** Flags any summary markdown that is not exactly "## ok": a rule the schema cannot say. */
  const check = (output: Record<string, unknown>) => {
    const summary = output['summary'] as { markdown?: string } | undefined;
    return summary?.markdown === '## ok'
      ? []
      : [
          {
            rule: 'summary_is_ok',
            path: '/summary/markdown',
            message: 'summary.markdown must be ok',
          },
          { rule: 'second_rule', path: '/details', message: 'details must agree' },
        ];
  };
  const run = (steps: ScriptedStep[]) => {
    const h = harness(steps);
    const clock = h.clock;
    const budget = new TimeBudget({ startedAt: clock.now().getTime(), clock: clock.now });
    return {
      h,
      result: runStructuredOutput({
        client: h.client,
        request: REQUEST,
        schema,
        budget,
        sleep: clock.sleep,
        logger: h.memory.logger,
        check,
      }),
    };
  };

  it('repairs a schema-valid output that breaks a rule, naming the rules in the repair prompt', async () => {
    const { h, result } = run([
      jsonResponse(validReportOutput(`## ${CANARY}`)),
      jsonResponse(validReportOutput('## ok'), { responseId: 'r-ok' }),
    ]);
    const success = ok(await result);
    expect(success).toMatchObject({
      attempts: 2,
      requestId: 'r-ok',
      repair: { attempted: true, reasonKind: 'invariant_violation' },
    });
    const repair = textOf(h.client.requests[1], REQUEST.contents.length);
    expect(repair).toContain('kind=invariant_violation');
    expect(repair).toContain('broke the rules below');
    expect(repair).toContain('- /summary/markdown: summary.markdown must be ok (summary_is_ok)');
    expect(h.memory.withEvent('structured_output_invalid')[0]).toMatchObject({
      reason: {
        kind: 'invariant_violation',
        message: 'the output breaks 2 rule(s): summary_is_ok, second_rule',
      },
      diagnostics: { validationErrorCount: 2 },
    });
    expect(JSON.stringify(h.memory.records)).not.toContain(CANARY);
  });

  it('fails INVALID_STRUCTURED_OUTPUT naming the rules when the repair breaks them too', async () => {
    const { h, result } = run([
      jsonResponse(validReportOutput(`## ${CANARY} 1`)),
      jsonResponse(validReportOutput(`## ${CANARY} 2`)),
    ]);
    const failure = failed(await result);
    expect(failure.error.code).toBe('INVALID_STRUCTURED_OUTPUT');
    expect(failure.error.message).toBe(
      'structured output invalid: kind=invariant_violation finishReason=STOP (the output breaks 2 rule(s): summary_is_ok, second_rule); the repair attempt was invalid too',
    );
    expect(failure.error.details).toMatchObject({
      reasonKind: 'invariant_violation',
      validationErrors: [
        {
          path: '/summary/markdown',
          keyword: 'summary_is_ok',
          message: 'summary.markdown must be ok',
        },
        { path: '/details', keyword: 'second_rule', message: 'details must agree' },
      ],
      firstAttempt: { reasonKind: 'invariant_violation' },
    });
    expect(h.client.requests).toHaveLength(2);
    expect(JSON.stringify([failure.error, h.memory.records])).not.toContain(CANARY);
  });

  it('never runs the check on schema-invalid output, and reshapes unsafe rule ids and paths', async () => {
    let checked = 0;
    const h = harness([textResponse('{"summary": 1}'), jsonResponse(validReportOutput('## x'))]);
    const budget = new TimeBudget({ startedAt: h.clock.now().getTime(), clock: h.clock.now });
    const failure = failed(
      await runStructuredOutput({
        client: h.client,
        request: REQUEST,
        schema,
        budget,
        sleep: h.clock.sleep,
        check: () => {
          checked += 1;
          return [{ rule: `Bad ${CANARY}`, path: `/${CANARY}/x y`, message: 'm' }];
        },
      }),
    );
    expect(checked).toBe(1); // the repair answer only
    expect(failure.error.details['validationErrors']).toEqual([
      { path: '/', keyword: 'invariant', message: 'm' },
    ]);
  });
});
