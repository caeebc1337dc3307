import { validate, type FlowRun, type LlmReportFile } from '@tda/contracts';
import { reportIdFor } from '@tda/flow-engine';
import {
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  InMemoryPromptRegistry,
  LlmStepRuntime,
  type LlmClient,
} from '@tda/llm';
import {
  AGGREGATE_AS_OF,
  aggregateInputReport,
  jsonResponse,
  ScriptedLlmClient,
  validAggregateOutput,
} from '@tda/llm/testing';
import { LLM_REPORT_STEP } from '@tda/step-types';
import { StepError, StepInputError } from '@tda/worker-kit';
import { requireHandlerContext } from '@tda/worker-kit/testing';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { executionMetadataOf, serializeReport } from './llm-report-file';
import { LlmReportHandler } from './llm-report.handler';
import {
  AGGREGATE_STEP,
  aggregateFixture,
  type AggregateFixture,
  type AggregateFixtureOptions,
} from './testing/aggregate.fixtures';
import { CountingPromptRegistry, FIXTURE_NOW } from './testing/llm-report.fixtures';

/**
 * The LLM_REPORT handler's aggregated mode (flow 3) alone, on the context the harness would build
 * for a flow-3 run and a real LlmStepRuntime over a scripted client: the input reports are read
 * from their refs and checked, the prompt carries them, the output is checked for citations, and
 * the file records the refs (no timeframe, the run's asOf).
 */
async function setup(
  client: LlmClient,
  options: AggregateFixtureOptions & { edit?: (run: FlowRun) => FlowRun } = {},
) {
  const fixture: AggregateFixture = await aggregateFixture(options);
  const run = options.edit === undefined ? fixture.run : options.edit(fixture.run);
  const registry = new CountingPromptRegistry(
    new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS, schemas: DEFAULT_SCHEMAS }),
  );
  const runtime = new LlmStepRuntime({ registry, client, sleep: async () => undefined });
  const context = requireHandlerContext(LLM_REPORT_STEP, {
    run,
    stepId: AGGREGATE_STEP,
    artifacts: fixture.artifacts,
    deadline: new Date(FIXTURE_NOW.getTime() + 780_000),
    now: () => FIXTURE_NOW,
  });
  return { handler: new LlmReportHandler(runtime), context, registry, fixture };
}

function reportOf(data: Buffer | undefined): LlmReportFile {
  const checked = validate.llmReportFile(JSON.parse(data?.toString('utf8') ?? ''));
  if (!checked.ok) throw new Error(`invalid report: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

describe('LlmReportHandler.execute: aggregated report (flow 3)', () => {
  it('synthesises the referenced reports in one model call and records them in the file', async () => {
    const fixture = await aggregateFixture();
    const ids = fixture.refs.map((r) => r.reportId);
    const client = new ScriptedLlmClient([jsonResponse(validAggregateOutput(ids))]);
    const { handler, context } = await setup(client);
    const result = await handler.execute(context);
    expect(client.calls).toBe(1);
    expect(result.primaryUri).toBe(fixture.reportUri);
    expect(result.outputs).toEqual({ reportId: reportIdFor(fixture.run.runId, AGGREGATE_STEP) });
    const report = reportOf(result.artifacts[0]?.data);
    expect(report.metadata).toMatchObject({
      runId: fixture.run.runId,
      stepId: AGGREGATE_STEP,
      symbol: 'BTC-USDT',
      asOf: AGGREGATE_AS_OF,
      promptId: 'prompt_aggregate_v1',
      schemaId: 'llm_aggregate_report_output_v1',
      schemaVersion: 1,
      inputs: {
        reportRefs: fixture.refs.map(({ reportId, gcsUri, timeframe, asOf }) => ({
          reportId,
          gcsUri,
          timeframe,
          asOf,
        })),
      },
    });
    expect(report.metadata.timeframe).toBeUndefined();
    expect(Object.keys(report.metadata.inputs)).toEqual(['reportRefs']);
    expect(LLM_REPORT_STEP.artifact.check?.(report)).toBeUndefined();
    // What the model saw: every report, labelled with its reportId; no chart.
    const request = client.requests[0];
    const text = (request?.contents ?? []).map((p) => ('text' in p ? p.text : '')).join('\n');
    for (const ref of fixture.refs) {
      expect(text).toContain(`- ${ref.reportId} - ${ref.timeframe ?? ''}`);
      expect(text).toContain(`Report ${ref.reportId} (${ref.timeframe ?? ''}, as of ${ref.asOf})`);
    }
    expect(request?.contents.some((p) => 'inlineData' in p)).toBe(false);
    expect(request?.context?.aggregate?.reports.map((r) => r.reportId)).toEqual(ids);
  });

  it('an unknown reportId cited is repaired once; cited again it fails INVALID_STRUCTURED_OUTPUT', async () => {
    const fixture = await aggregateFixture();
    const ids = fixture.refs.map((r) => r.reportId);
    const invented = 'rpt_0000000000000000000000ff';
    const repaired = new ScriptedLlmClient([
      jsonResponse(validAggregateOutput([invented])),
      jsonResponse(validAggregateOutput(ids)),
    ]);
    const first = await setup(repaired);
    const result = await first.handler.execute(first.context);
    expect(repaired.calls).toBe(2);
    expect(result.execution?.['llm']).toMatchObject({
      attempts: { total: 2 },
      repair: { attempted: true, reasonKind: 'invariant_violation' },
    });

    const wrong = new ScriptedLlmClient([
      jsonResponse(validAggregateOutput([invented])),
      jsonResponse(validAggregateOutput([ids[0] ?? '', invented])),
    ]);
    const second = await setup(wrong);
    const error = await rejectionOf(second.handler.execute(second.context));
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({ code: 'INVALID_STRUCTURED_OUTPUT', final: true });
    expect((error as StepError).message).toContain('citation_unknown_report');
    expect(
      JSON.stringify({ ...(error as StepError), message: (error as StepError).message }),
    ).not.toContain(invented);
    expect(wrong.calls).toBe(2);
  });

  it('refuses a ref of another symbol, before any model call', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, context, fixture } = await setup(client, {
      inputs: [{ timeframe: '1w' }, { timeframe: '1d', symbol: 'ETH/USDT' }],
    });
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: `inputs.reportRefs[1] (${fixture.refs[1]?.reportId ?? ''}) is a report of ETH/USDT, not of BTC-USDT`,
      details: { field: 'reportRefs[1]', uri: fixture.refs[1]?.gcsUri },
    });
    expect(client.calls).toBe(0);
  });

  it('accepts another spelling of the same symbol (compact BASE+QUOTE)', async () => {
    const fixture = await aggregateFixture({ inputs: [{ timeframe: '1w', symbol: 'btcusdt' }] });
    const client = new ScriptedLlmClient([
      jsonResponse(validAggregateOutput(fixture.refs.map((r) => r.reportId))),
    ]);
    const { handler, context } = await setup(client, {
      inputs: [{ timeframe: '1w', symbol: 'btcusdt' }],
    });
    await expect(handler.execute(context)).resolves.toMatchObject({
      primaryUri: fixture.reportUri,
    });
  });

  it('refuses a report of a later asOf than the run, by its ref or by its file', async () => {
    const later = '2026-09-21T00:00:00Z';
    const byFile = await setup(new ScriptedLlmClient([]), {
      inputs: [{ timeframe: '1w' }, { timeframe: '1d', asOf: later }],
      refs: (refs) => refs.map((r) => ({ ...r, asOf: AGGREGATE_AS_OF })),
    });
    await expect(rejectionOf(byFile.handler.execute(byFile.context))).resolves.toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: expect.stringMatching(
        /^inputs\.reportRefs\[1\] \(rpt_[a-z0-9]{24}\) describes 2026-09-21T00:00:00Z, after the run's asOf 2026-09-20T00:00:00Z$/,
      ),
    });
    const byRef = await setup(new ScriptedLlmClient([]), {
      refs: (refs) => refs.map((r, i) => (i === 0 ? { ...r, asOf: later } : r)),
    });
    await expect(rejectionOf(byRef.handler.execute(byRef.context))).resolves.toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      details: { field: 'reportRefs[0]' },
    });
    // Refused after the pre-flight (one registry read), before any model call.
    expect(byRef.registry.getPromptCalls).toBe(1);
    expect((byRef.handler.runtime.client as ScriptedLlmClient).calls).toBe(0);
  });

  it('refuses a missing file and a file that is not the report its ref names', async () => {
    const missing = await setup(new ScriptedLlmClient([]), {
      refs: (refs) => refs.map((r, i) => (i === 2 ? { ...r, gcsUri: `${r.gcsUri}.gone` } : r)),
    });
    await expect(rejectionOf(missing.handler.execute(missing.context))).resolves.toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: expect.stringMatching(
        /^inputs\.reportRefs\[2\] \(rpt_[a-z0-9]{24}\) does not exist$/,
      ),
    });
    // refs 0 and 1 swapped their files: identity differs from the ref
    const swapped = await setup(new ScriptedLlmClient([]), {
      refs: (refs) =>
        refs.map((r, i) => (i === 0 ? { ...r, gcsUri: refs[1]?.gcsUri ?? r.gcsUri } : r)),
    });
    const error = await rejectionOf(swapped.handler.execute(swapped.context));
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      details: { field: 'reportRefs[0]' },
    });
    expect((error as Error).message).toContain('not of its ref');
  });

  it('refuses a ref whose file breaks the report contract, naming paths only', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, context, fixture } = await setup(client, {
      refs: (refs) => refs.map((r, i) => (i === 0 ? { ...r, gcsUri: `${r.gcsUri}.broken` } : r)),
    });
    const broken = { ...aggregateInputReport({ timeframe: '1M' }), output: { CANARY: 'CANARY' } };
    await fixture.artifacts.put(
      fixture.refs[0]?.gcsUri ?? '',
      Buffer.from(JSON.stringify(broken)),
      { contentType: 'application/json' },
    );
    const error = await rejectionOf(handler.execute(context));
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: expect.stringContaining('violates llm_report_file.schema.json'),
      details: {
        field: 'reportRefs[0]',
        issues: [
          { path: '/output', keyword: 'required' },
          { path: '/output', keyword: 'required' },
        ],
      },
    });
    expect(
      JSON.stringify({ ...(error as StepError), message: (error as StepError).message }),
    ).not.toContain('CANARY');
    expect(client.calls).toBe(0);
  });

  it('an aggregated step needs an aggregate output format (LLM_PROFILE_INVALID, no model call)', async () => {
    const client = new ScriptedLlmClient([]);
    const { handler, context } = await setup(client, {
      edit: (run) => {
        const step = run.steps[AGGREGATE_STEP];
        if (step === undefined) throw new Error('fixture');
        const llm = step.inputs['llm'] as { llmProfile: Record<string, unknown> };
        const inputs = {
          ...step.inputs,
          llm: {
            ...llm,
            llmProfile: {
              ...llm.llmProfile,
              structuredOutput: { schemaId: 'llm_report_output_v1' },
            },
          },
        };
        return { ...run, steps: { ...run.steps, [AGGREGATE_STEP]: { ...step, inputs } } };
      },
    });
    await expect(rejectionOf(handler.execute(context))).resolves.toMatchObject({
      code: 'LLM_PROFILE_INVALID',
      details: { field: 'structuredOutput.schemaId' },
    });
    expect(client.calls).toBe(0);
  });

  it('refuses reportRefs mixed with timeframe inputs, a timeframe, or a run without asOf', async () => {
    const edits: [string, (run: FlowRun) => FlowRun][] = [
      ['timeframe', (run) => withStep(run, (s) => ({ ...s, timeframe: '1d' }))],
      ['scope.asOf', (run) => ({ ...run, scope: { symbol: run.scope.symbol } })],
    ];
    for (const [field, edit] of edits) {
      const client = new ScriptedLlmClient([]);
      const { handler, context, registry } = await setup(client, { edit });
      const error = await rejectionOf(handler.execute(context));
      expect(error).toBeInstanceOf(StepInputError);
      expect(error).toMatchObject({ details: { field } });
      expect(registry.getPromptCalls + registry.getSchemaCalls).toBe(0);
    }
    // The harness refuses a named step that is not in the run; a handler given one anyway too.
    const { handler, context, registry } = await setup(new ScriptedLlmClient([]));
    const mixed = { ...context, inputs: { ...context.inputs, previousReportStepIds: ['x'] } };
    await expect(rejectionOf(handler.execute(mixed))).resolves.toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      details: { field: 'previousReportStepIds' },
    });
    expect(registry.getPromptCalls).toBe(0);
  });
});

function withStep(
  run: FlowRun,
  change: (step: FlowRun['steps'][string]) => FlowRun['steps'][string],
): FlowRun {
  const step = run.steps[AGGREGATE_STEP];
  if (step === undefined) throw new Error('fixture');
  return { ...run, steps: { ...run.steps, [AGGREGATE_STEP]: change(step) } };
}

describe('LlmReportHandler.recover: aggregated report', () => {
  it('finalizes from the aggregated file without the registry or a model', async () => {
    const fixture = await aggregateFixture();
    const ids = fixture.refs.map((r) => r.reportId);
    const produced = await setup(new ScriptedLlmClient([jsonResponse(validAggregateOutput(ids))]));
    const report = reportOf((await produced.handler.execute(produced.context)).artifacts[0]?.data);

    const client = new ScriptedLlmClient([]);
    const { handler, context, registry } = await setup(client);
    const result = await handler.recover(
      { uri: fixture.reportUri, artifact: report, bytes: serializeReport(report) },
      context,
    );
    expect(result).toEqual({
      artifacts: [],
      primaryUri: fixture.reportUri,
      outputs: { reportId: reportIdFor(fixture.run.runId, AGGREGATE_STEP) },
      execution: { llm: executionMetadataOf(report) },
    });
    expect(executionMetadataOf(report)).toMatchObject({
      promptId: 'prompt_aggregate_v1',
      schemaId: 'llm_aggregate_report_output_v1',
    });
    expect(client.calls + registry.getPromptCalls + registry.getSchemaCalls).toBe(0);
  });
});
