import { validate, type FlowRun } from '@tda/contracts';
import { applyPatch, reportIdFor, stepPatch } from '@tda/flow-engine';
import {
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  InMemoryPromptRegistry,
  LlmCallError,
  LlmStepRuntime,
  type LlmClient,
} from '@tda/llm';
import { jsonResponse, ScriptedLlmClient, textResponse, validReportOutput } from '@tda/llm/testing';
import { LLM_REPORT_STEP } from '@tda/step-types';
import { StepError, StepInputError } from '@tda/worker-kit';
import { requireHandlerContext } from '@tda/worker-kit/testing';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { executionMetadataOf, serializeReport } from './llm-report-file';
import { LlmReportHandler } from './llm-report.handler';
import {
  CountingPromptRegistry,
  FIXTURE_NOW,
  flowFixture,
  previousReport,
  REPORT_1W,
  type LlmReportFixture,
} from './testing/llm-report.fixtures';

/**
 * The LLM_REPORT handler alone, on the context the harness would build (handlerContext: inputs
 * validated, upstream reader over the fixture's artifacts) and a real LlmStepRuntime over a
 * scripted client: what it returns, and what it throws for the harness to map.
 */
const USAGE = { promptTokenCount: 100, candidatesTokenCount: 50, totalTokenCount: 150 };

async function setup(client: LlmClient, edit?: (run: FlowRun) => FlowRun) {
  const fixture: LlmReportFixture = await flowFixture();
  const run = edit === undefined ? fixture.run : edit(fixture.run);
  const registry = new CountingPromptRegistry(
    new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS, schemas: DEFAULT_SCHEMAS }),
  );
  const sleeps: number[] = [];
  const runtime = new LlmStepRuntime({
    registry,
    client,
    sleep: async (ms: number) => {
      sleeps.push(ms);
    },
  });
  const context = requireHandlerContext(LLM_REPORT_STEP, {
    run,
    stepId: REPORT_1W,
    artifacts: fixture.artifacts,
    deadline: new Date(FIXTURE_NOW.getTime() + 780_000),
    now: () => FIXTURE_NOW,
  });
  return { handler: new LlmReportHandler(runtime), context, registry, sleeps, fixture };
}

describe('LlmReportHandler.execute', () => {
  it('returns the report file as the primary artifact and counts every request in execution.llm', async () => {
    const client = new ScriptedLlmClient([
      textResponse('not json', { usageMetadata: { ...USAGE, thoughtsTokenCount: 7 } }),
      jsonResponse(validReportOutput('## 1w\n\nRepaired.'), {
        responseId: 'resp-2',
        usageMetadata: { promptTokenCount: 200, candidatesTokenCount: 60, totalTokenCount: 260 },
      }),
    ]);
    const { handler, context, fixture } = await setup(client);
    const result = await handler.execute(context);
    expect(result.primaryUri).toBe(fixture.reportUri);
    expect(result.outputs).toEqual({ reportId: reportIdFor(fixture.run.runId, REPORT_1W) });
    expect(result.artifacts.map((a) => [a.uri, a.contentType])).toEqual([
      [fixture.reportUri, 'application/json'],
    ]);
    const report = validate.llmReportFile(
      JSON.parse(result.artifacts[0]?.data.toString('utf8') ?? ''),
    );
    if (!report.ok) throw new Error('invalid report');
    expect(report.value.output.summary.markdown).toBe('## 1w\n\nRepaired.');
    expect(result.execution).toEqual({
      llm: {
        provider: 'gemini',
        modelName: 'gemini-2.5-flash',
        promptId: 'prompt_week_v1',
        schemaId: 'llm_report_output_v1',
        schemaSha256: report.value.metadata.llm.schemaSha256,
        requests: 2,
        answered: 2,
        attempts: { total: 2 },
        repair: { attempted: true, reasonKind: 'json_parse' },
        // summed over both answers
        usage: {
          promptTokenCount: 300,
          candidatesTokenCount: 110,
          totalTokenCount: 410,
          thoughtsTokenCount: 7,
        },
        finishReason: 'STOP',
        modelVersion: 'gemini-2.5-flash',
        requestId: 'resp-2',
        // the accepted answer's, as reported
        usageMetadata: { promptTokenCount: 200, candidatesTokenCount: 60, totalTokenCount: 260 },
      },
    });
    // The file records the accepted answer (the contract's usage), never the totals.
    expect(report.value.metadata.llm).toMatchObject({
      attempts: { total: 2 },
      requestId: 'resp-2',
      usageMetadata: { promptTokenCount: 200, candidatesTokenCount: 60, totalTokenCount: 260 },
    });
  });

  it('a failure after the model answered is a final StepError carrying execution.llm', async () => {
    const client = new ScriptedLlmClient([
      textResponse('not json'),
      jsonResponse({ summary: 'not an object' }),
    ]);
    const { handler, context } = await setup(client);
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({
      code: 'INVALID_STRUCTURED_OUTPUT',
      retryable: false,
      final: true,
      execution: {
        llm: {
          requests: 2,
          answered: 2,
          attempts: { total: 2 },
          repair: { attempted: true, reasonKind: 'json_parse' },
          usage: { promptTokenCount: 200, candidatesTokenCount: 100, totalTokenCount: 300 },
        },
      },
    });
    expect(client.calls).toBe(2);
  });

  it('an unanswered call the runtime retried 3 times is final too, though retryable', async () => {
    const unavailable = () =>
      new LlmCallError('LLM_UNAVAILABLE', 'gemini generateContent failed: HTTP 503', true, {
        status: 503,
      });
    const client = new ScriptedLlmClient([unavailable(), unavailable(), unavailable()]);
    const { handler, context, sleeps } = await setup(client);
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      final: true,
      details: { status: 503, retriesExhausted: true },
      execution: { llm: { requests: 3, answered: 0, attempts: { total: 1 } } },
    });
    expect(sleeps).toEqual([1_000, 2_000]);
  });

  it("refuses a step whose timeframe is not its stepId's segment (StepInputError), before the registry or a model", async () => {
    const client = new ScriptedLlmClient([]);
    // Its upstreams relabelled too, so that the harness's same-timeframe check lets it through.
    const { handler, context, registry } = await setup(client, (run) =>
      applyPatch(run, {
        ...stepPatch(REPORT_1W, { timeframe: '1d' }),
        ...stepPatch('ohlcv_export:1w', { timeframe: '1d' }),
        ...stepPatch('charts:1w:ctpl_default_v1', { timeframe: '1d' }),
      }),
    );
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: 'stepId names timeframe 1w, the step has 1d',
      details: { field: 'timeframe' },
    });
    expect(registry.getSchemaCalls + registry.getPromptCalls).toBe(0);
    expect(client.calls).toBe(0);
  });

  it('refuses a step without a timeframe (StepInputError)', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, context } = await setup(client, (run) => {
      const step = run.steps[REPORT_1W];
      if (step === undefined) throw new Error('fixture');
      const { timeframe: _dropped, ...untimed } = step;
      return { ...run, steps: { ...run.steps, [REPORT_1W]: untimed } };
    });
    expect(context.step.timeframe).toBeUndefined();
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: 'an LLM_REPORT step needs a timeframe',
      details: { field: 'timeframe' },
    });
    expect(client.calls).toBe(0);
  });
});

describe('LlmReportHandler.execute: metadata.asOf of a report of one timeframe', () => {
  const AS_OF = '2026-11-21T00:00:00Z';

  it("is the run's scope.asOf", async () => {
    const client = new ScriptedLlmClient([jsonResponse(validReportOutput())]);
    const { handler, context } = await setup(client, (run) => ({
      ...run,
      scope: { ...run.scope, asOf: AS_OF },
    }));
    const result = await handler.execute(context);
    const report = validate.llmReportFile(
      JSON.parse(result.artifacts[0]?.data.toString('utf8') ?? ''),
    );
    if (!report.ok) throw new Error('invalid report');
    expect(report.value.metadata).toMatchObject({ asOf: AS_OF, timeframe: '1w' });
  });

  it('is the OHLCV export asOf for a run without one (created before asOf existed)', async () => {
    const client = new ScriptedLlmClient([jsonResponse(validReportOutput())]);
    const { handler, context } = await setup(client);
    expect(context.run.scope.asOf).toBeUndefined();
    const ohlcv = await context.upstream('ohlcv');
    const result = await handler.execute(context);
    const report = validate.llmReportFile(
      JSON.parse(result.artifacts[0]?.data.toString('utf8') ?? ''),
    );
    if (!report.ok) throw new Error('invalid report');
    expect(ohlcv?.artifact.asOf).toMatch(/^20/);
    expect(report.value.metadata.asOf).toBe(ohlcv?.artifact.asOf);
  });

  it('an aggregate output format is refused for a report of one timeframe (LLM_PROFILE_INVALID)', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, context } = await setup(client, (run) => {
      const step = run.steps[REPORT_1W];
      if (step === undefined) throw new Error('fixture');
      const llm = step.inputs['llm'] as { llmProfile: Record<string, unknown> };
      const llmProfile = {
        ...llm.llmProfile,
        structuredOutput: { schemaId: 'llm_aggregate_report_output_v1' },
      };
      const inputs = { ...step.inputs, llm: { ...llm, llmProfile } };
      return { ...run, steps: { ...run.steps, [REPORT_1W]: { ...step, inputs } } };
    });
    await expect(rejectionOf(handler.execute(context))).resolves.toMatchObject({
      code: 'LLM_PROFILE_INVALID',
      details: { field: 'structuredOutput.schemaId' },
    });
    expect(client.calls).toBe(0);
  });
});

describe('LlmReportHandler.recover', () => {
  it('finalizes from the report the harness vouched for, without the registry or a model', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, registry, fixture, context } = await setup(client);
    const report = {
      ...previousReport(fixture.run.runId),
      metadata: {
        ...previousReport(fixture.run.runId).metadata,
        stepId: REPORT_1W,
        timeframe: '1w' as const,
      },
    };
    const result = await handler.recover(
      { uri: fixture.reportUri, artifact: report, bytes: serializeReport(report) },
      context,
    );
    expect(result).toEqual({
      artifacts: [],
      primaryUri: fixture.reportUri,
      outputs: { reportId: reportIdFor(fixture.run.runId, REPORT_1W) },
      execution: { llm: executionMetadataOf(report) },
    });
    expect(executionMetadataOf(report)).toEqual({
      provider: 'gemini',
      modelName: 'gemini-2.5-flash',
      promptId: 'prompt_month_v1',
      schemaId: 'llm_report_output_v1',
      finishReason: 'STOP',
      attempts: { total: 1 },
    });
    expect(client.calls).toBe(0);
    expect(registry.getSchemaCalls + registry.getPromptCalls).toBe(0);
  });
});
