import { InMemoryArtifactStore } from '@tda/artifacts';
import { TdaError, type LlmReportFile } from '@tda/contracts';
import { stepPatch } from '@tda/flow-engine';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import {
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  InMemoryPromptRegistry,
  LlmCallError,
  LlmStepRuntime,
  OfflineAnalystClient,
} from '@tda/llm';
import {
  jsonResponse,
  ScriptedLlmClient,
  textResponse,
  tinyPng,
  validReportOutput,
} from '@tda/llm/testing';
import { BrokerPublisher, buildTopology, InMemoryBroker } from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { createStepWorker } from '@tda/worker-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { serializeReport } from './llm-report-file';
import { LlmReportHandler } from './llm-report.handler';
import {
  CHARTS_1W,
  flowFixture,
  FIXTURE_NOW,
  parseReport,
  previousReport,
  REPORT_1M,
  REPORT_1W,
  runLlmReportStep,
  snapshot,
  uriOf,
} from './testing/llm-report.fixtures';

/**
 * The LLM_REPORT handler inside the real step harness (in-memory store, artifacts, publisher):
 * a flow-1 run whose OHLCV, charts and 1M report steps SUCCEEDED with real artifacts, and the 1w
 * report step READY.
 */
const NOW = FIXTURE_NOW;
const CANARY = 'CANARY-7f3a9c-do-not-leak';
const deliver = runLlmReportStep;

describe('LLM_REPORT through the step harness', () => {
  it('finalizes the 1w report SUCCEEDED with a schema-valid llm_report_file and its metadata', async () => {
    const client = new ScriptedLlmClient([
      jsonResponse(validReportOutput('## 1w\n\nWeekly holds.'), {
        modelVersion: 'gemini-2.5-flash-001',
        responseId: 'resp-42',
      }),
    ]);
    const run = await deliver({ client });
    const { outcome, step, bytes, reportUri } = run;
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    expect(client.calls).toBe(1);
    const report = parseReport(bytes);
    const runId = report.metadata.runId;
    expect(report.metadata).toMatchObject({
      schemaVersion: 1,
      stepId: REPORT_1W,
      symbol: 'BTC-USDT',
      timeframe: '1w',
      promptId: 'prompt_week_v1',
      schemaId: 'llm_report_output_v1',
      modelName: 'gemini-2.5-flash',
      provider: 'gemini',
      inputs: {
        ohlcvGcsUri: uriOf(runId, '1w', 'ohlcv_export:1w'),
        chartsManifestGcsUri: uriOf(runId, '1w', CHARTS_1W),
        chartGcsUris: [`gs://tda-artifacts/runs/${runId}/1w/${CHARTS_1W}.ctpl_default_v1.png`],
        previousReportGcsUris: [uriOf(runId, '1M', REPORT_1M)],
      },
      llm: {
        finishReason: 'STOP',
        modelVersion: 'gemini-2.5-flash-001',
        requestId: 'resp-42',
        attempts: { total: 1 },
        usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 50, totalTokenCount: 150 },
      },
    });
    expect(report.metadata).not.toHaveProperty('generatedAt');
    expect(report.output.summary.markdown).toBe('## 1w\n\nWeekly holds.');
    // The chart went to the model as an image and the 1M report as context text.
    const request = client.requests[0];
    expect(request?.contents.some((p) => 'inlineData' in p)).toBe(true);
    expect(request?.context?.previousReports).toHaveLength(1);
    expect(step.status).toBe('SUCCEEDED');
    expect(step.outputs.gcs_uri).toBe(reportUri);
    expect(step.outputs.execution?.['llm']).toMatchObject({
      provider: 'gemini',
      modelName: 'gemini-2.5-flash',
      promptId: 'prompt_week_v1',
      schemaId: 'llm_report_output_v1',
      finishReason: 'STOP',
      modelVersion: 'gemini-2.5-flash-001',
      requestId: 'resp-42',
      attempts: { total: 1 },
      usageMetadata: { totalTokenCount: 150 },
      schemaSha256: report.metadata.llm.schemaSha256,
    });
    // Every request of the step is counted (seed 002 execution metadata).
    expect(step.outputs.execution?.['llm']).toMatchObject({
      requests: 1,
      answered: 1,
      repair: { attempted: false },
      usage: {
        promptTokenCount: 100,
        candidatesTokenCount: 50,
        totalTokenCount: 150,
        thoughtsTokenCount: 0,
      },
    });
    expect(report.metadata.llm.schemaSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(run.calls).toEqual({ executions: 1, recoveries: 0 });
    // The registry was read once: the profile's schema, then the prompt.
    expect([run.registry.getSchemaCalls, run.registry.getPromptCalls]).toEqual([1, 1]);
  });

  it('writes byte-identical reports for the same inputs (offline analyst, deterministic)', async () => {
    const first = await deliver({ client: new OfflineAnalystClient() });
    const second = await deliver({ client: new OfflineAnalystClient() });
    expect(first.outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    const report = parseReport(first.bytes);
    expect(report.metadata.provider).toBe('offline');
    expect(report.metadata.llm.modelVersion).toBe('offline-analyst-v1');
    expect(report.output.summary.markdown).toContain('Offline analyst');
    // Different runIds (seeded random is shared) would differ; same fixture → same bytes.
    expect(first.bytes?.equals(second.bytes ?? Buffer.alloc(0))).toBe(true);
  });

  it('fails LLM_PROFILE_INVALID before any model call', async () => {
    const client = new ScriptedLlmClient([]);
    const { outcome, step, bytes, registry, artifacts, calls } = await deliver({
      client,
      patch: (run) => {
        const inputs = run.steps[REPORT_1W]?.inputs ?? {};
        const llm = inputs['llm'] as { promptId: string; llmProfile: Record<string, unknown> };
        return stepPatch(REPORT_1W, {
          inputs: {
            ...inputs,
            llm: { ...llm, llmProfile: { ...llm.llmProfile, candidateCount: 2 } },
          },
        });
      },
    });
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'LLM_PROFILE_INVALID', tries: 1 });
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({ code: 'LLM_PROFILE_INVALID', retryable: false });
    expect(step.error?.message).toContain('candidateCount');
    expect(client.calls).toBe(0);
    expect(bytes).toBeNull();
    // The pre-flight comes first: neither the prompt nor any context artifact was read.
    expect(registry.getPromptCalls).toBe(0);
    expect(artifacts.reads).toBe(0);
    expect(calls.executions).toBe(1);
  });

  it('treats a stale schemaSha256 in the profile as informational: logged, not a failure', async () => {
    const { outcome, log } = await deliver({
      client: new OfflineAnalystClient(),
      patch: (run) => {
        const inputs = run.steps[REPORT_1W]?.inputs ?? {};
        const llm = inputs['llm'] as { promptId: string; llmProfile: Record<string, unknown> };
        const structuredOutput = llm.llmProfile['structuredOutput'] as Record<string, unknown>;
        return stepPatch(REPORT_1W, {
          inputs: {
            ...inputs,
            llm: {
              ...llm,
              llmProfile: {
                ...llm.llmProfile,
                structuredOutput: { ...structuredOutput, schemaSha256: '0'.repeat(64) },
              },
            },
          },
        });
      },
    });
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    expect(log.withEvent('llm_schema_hash_mismatch')[0]).toMatchObject({
      schemaId: 'llm_report_output_v1',
      profile: '0'.repeat(64),
    });
  });

  it('fails INVALID_STEP_INPUTS when previousReportStepIds names a non-LLM step', async () => {
    const client = new ScriptedLlmClient([]);
    const { outcome, step } = await deliver({
      client,
      patch: (run) =>
        stepPatch(REPORT_1W, {
          inputs: { ...run.steps[REPORT_1W]?.inputs, previousReportStepIds: [CHARTS_1W] },
        }),
    });
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'INVALID_STEP_INPUTS' });
    expect(step.error?.code).toBe('INVALID_STEP_INPUTS');
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: `inputs.previousReportStepIds[0] '${CHARTS_1W}' is a CHART_EXPORT step, not LLM_REPORT`,
      details: { field: 'previousReportStepIds[0]', stepId: CHARTS_1W, stepType: 'CHART_EXPORT' },
    });
    expect(client.calls).toBe(0);
  });

  it('fails INVALID_STEP_INPUTS when the charts step has no outputs.gcs_uri', async () => {
    const client = new ScriptedLlmClient([]);
    const { step, calls } = await deliver({
      client,
      patch: () => stepPatch(CHARTS_1W, { outputs: {} }),
    });
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: `upstream step '${CHARTS_1W}' has no valid outputs.gcs_uri`,
      details: { field: 'chartsManifestStepId', stepId: CHARTS_1W },
    });
    expect(client.calls).toBe(0);
    // refused by the harness: the handler never ran
    expect(calls.executions).toBe(0);
  });

  it('fails INVALID_STEP_INPUTS when the step timeframe contradicts its stepId or its inputs', async () => {
    // seed 002 invariant: steps[stepId].timeframe matches the stepId's timeframe segment (and
    // the artifact path segment derived from it). With its upstreams of that timeframe too, the
    // harness lets it through and the handler refuses it before the registry or a model.
    const client = new ScriptedLlmClient([]);
    const relabelled = await deliver({
      client,
      patch: () => ({
        ...stepPatch(REPORT_1W, { timeframe: '1d' }),
        ...stepPatch('ohlcv_export:1w', { timeframe: '1d' }),
        ...stepPatch(CHARTS_1W, { timeframe: '1d' }),
      }),
    });
    expect(relabelled.step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: 'stepId names timeframe 1w, the step has 1d',
      details: { field: 'timeframe' },
    });
    expect(relabelled.calls.executions).toBe(1);
    expect(relabelled.registry.getSchemaCalls + relabelled.registry.getPromptCalls).toBe(0);
    expect(client.calls).toBe(0);
    // Only the report step relabelled: its upstreams (1w) no longer share its timeframe.
    const alone = await deliver({
      client,
      patch: () => stepPatch(REPORT_1W, { timeframe: '1d' }),
    });
    expect(alone.step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: "inputs.ohlcvStepId 'ohlcv_export:1w' has timeframe 1w, this step 1d",
    });
    expect(alone.calls.executions).toBe(0);
    // An upstream of another timeframe (the 1M OHLCV feeding the 1w report).
    const crossed = await deliver({
      client,
      patch: (run) => {
        const report = run.steps[REPORT_1W];
        return stepPatch(REPORT_1W, {
          dependsOn: [...(report?.dependsOn ?? []), 'ohlcv_export:1M'],
          inputs: { ...report?.inputs, ohlcvStepId: 'ohlcv_export:1M' },
        });
      },
    });
    expect(crossed.step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: "inputs.ohlcvStepId 'ohlcv_export:1M' has timeframe 1M, this step 1w",
    });
    expect(client.calls).toBe(0);
  });

  it('accepts a charts manifest of another run only when a rerun reused the step from that run', async () => {
    const OTHER_RUN = '20261120-080000_BTC-USDT_other';
    const foreignUri = uriOf(OTHER_RUN, '1w', CHARTS_1W);
    // The same charts, as the run that produced them wrote them: its runId inside.
    const copyManifest = async (fixture: {
      run: { runId: string };
      artifacts: InMemoryArtifactStore;
    }) => {
      const own = fixture.artifacts.read(uriOf(fixture.run.runId, '1w', CHARTS_1W));
      const manifest = { ...JSON.parse((await own).toString('utf8')), runId: OTHER_RUN };
      await fixture.artifacts.put(foreignUri, Buffer.from(JSON.stringify(manifest)), {
        contentType: 'application/json',
      });
    };
    const pointAtForeign = { 'outputs.gcs_uri': foreignUri };
    const reusedFrom = {
      'outputs.execution.reusedFrom': {
        runId: OTHER_RUN,
        stepId: CHARTS_1W,
        sourceRunId: OTHER_RUN,
      },
    };

    const foreign = await deliver({
      client: new ScriptedLlmClient([]),
      before: copyManifest,
      patch: () => stepPatch(CHARTS_1W, pointAtForeign),
    });
    expect(foreign.step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: `${CHARTS_1W}'s artifact belongs to run ${OTHER_RUN}`,
      details: { field: 'chartsManifestStepId', stepId: CHARTS_1W, uri: foreignUri },
    });

    const client = new ScriptedLlmClient([
      jsonResponse(validReportOutput('## 1w\n\nReused charts.')),
    ]);
    const reused = await deliver({
      client,
      before: copyManifest,
      patch: () => stepPatch(CHARTS_1W, { ...pointAtForeign, ...reusedFrom }),
    });
    expect(reused.outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    const report = parseReport(reused.bytes);
    expect(report.metadata.runId).toBe(reused.stored.runId);
    expect(report.metadata.inputs.chartsManifestGcsUri).toBe(foreignUri);
    expect(client.calls).toBe(1);
  });

  it('fails INVALID_STEP_INPUTS for a chart image over the 256 KiB limit, without a model call', async () => {
    const client = new ScriptedLlmClient([]);
    const { step } = await deliver({
      client,
      before: async (fixture) => {
        const pngUri = `gs://tda-artifacts/runs/${fixture.run.runId}/1w/${CHARTS_1W}.ctpl_default_v1.png`;
        // The fixture wrote the small PNG create-only; a fresh store holds the oversized one.
        const big = tinyPng(300 * 1024);
        const copy = new InMemoryArtifactStore();
        for (const [uri, data] of await snapshot(fixture.artifacts)) {
          await copy.put(uri, uri === pngUri ? big : data, {
            contentType: 'application/octet-stream',
          });
        }
        fixture.artifacts = copy;
      },
    });
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: { artifact: 'chart', bytes: 300 * 1024, limitBytes: 256 * 1024 },
    });
    expect(client.calls).toBe(0);
  });

  it('fails INVALID_STEP_INPUTS for a promptId missing from the registry; extra input fields are tolerated', async () => {
    const client = new ScriptedLlmClient([]);
    const { step } = await deliver({
      client,
      prompts: DEFAULT_PROMPTS.filter((p) => p.promptId !== 'prompt_week_v1'),
      patch: (run) =>
        stepPatch(REPORT_1W, { inputs: { ...run.steps[REPORT_1W]?.inputs, note: 'extra' } }),
    });
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      details: { field: 'llm.promptId', promptId: 'prompt_week_v1' },
    });
    expect(client.calls).toBe(0);
  });

  it('finishes FAILED with the provider error code when the model stays unavailable: the runtime retried, the harness does not', async () => {
    const unavailable = () =>
      new LlmCallError('LLM_UNAVAILABLE', 'gemini generateContent failed: HTTP 503', true, {
        status: 503,
      });
    // 3 provider tries by the LLM runtime; the failure is final, so no harness try repeats them.
    const client = new ScriptedLlmClient(Array.from({ length: 3 }, unavailable));
    const sleeps: number[] = [];
    const { step, outcome, calls, registry, artifacts } = await deliver({
      client,
      policy: { handlerRetryBaseDelayMs: 1, handlerRetryMaxDelayMs: 1 },
      runtime: {
        sleep: async (ms: number) => {
          sleeps.push(ms);
        },
      },
    });
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      details: { status: 503, retriesExhausted: true, tries: 3, attempt: 1 },
    });
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'LLM_UNAVAILABLE', tries: 1 });
    expect(client.calls).toBe(3);
    expect(sleeps).toEqual([1_000, 2_000]);
    expect(calls.executions).toBe(1);
    expect([registry.getSchemaCalls, registry.getPromptCalls]).toEqual([1, 1]);
    // one read of the context: the OHLCV export, the manifest, its PNG, the 1M report
    expect(artifacts.reads).toBe(4);
    expect(step.outputs.execution?.['llm']).toMatchObject({
      requests: 3,
      answered: 0,
      attempts: { total: 1 },
      repair: { attempted: false },
      usage: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 },
    });
  });

  it('retries in-process what comes before the model call (a registry hiccup), then asks the model once', async () => {
    const client = new ScriptedLlmClient([
      jsonResponse(validReportOutput('## 1w\n\nAfter a retry.')),
    ]);
    const { outcome, step, calls, registry } = await deliver({
      client,
      policy: { handlerRetryBaseDelayMs: 1, handlerRetryMaxDelayMs: 1 },
      registryFaults: {
        getPrompt: [
          new TdaError('UPSTREAM_UNAVAILABLE', 'llm_prompts could not be read', {
            retryable: true,
          }),
        ],
      },
    });
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED', tries: 2 });
    expect(step.status).toBe('SUCCEEDED');
    expect(calls.executions).toBe(2);
    expect(registry.getPromptCalls).toBe(2);
    expect(client.calls).toBe(1);
  });

  it('recovers a RUNNING step from its existing report without a model call', async () => {
    const client = new ScriptedLlmClient([]);
    let existing: LlmReportFile | undefined;
    const recovered = await deliver({
      client,
      patch: () =>
        stepPatch(REPORT_1W, {
          status: 'RUNNING',
          attempt: 1,
          startedAt: new Date(NOW.getTime() - 900_000).toISOString(),
          lease: {
            owner: 'crashed-worker',
            expiresAt: new Date(NOW.getTime() - 60_000).toISOString(),
          },
        }),
      before: async (fixture) => {
        const report = previousReport(fixture.run.runId);
        existing = {
          ...report,
          metadata: {
            ...report.metadata,
            stepId: REPORT_1W,
            timeframe: '1w',
            promptId: 'prompt_week_v1',
            llm: { finishReason: 'STOP', attempts: { total: 2 }, requestId: 'resp-crashed' },
          },
        };
        await fixture.artifacts.put(fixture.reportUri, serializeReport(existing), {
          contentType: 'application/json',
        });
      },
    });
    const { outcome, step, reportUri } = recovered;
    expect(existing).toBeDefined();
    expect(outcome).toMatchObject({ kind: 'recovered', status: 'SUCCEEDED' });
    expect(client.calls).toBe(0);
    expect(recovered.calls).toEqual({ executions: 0, recoveries: 1 });
    expect(step.status).toBe('SUCCEEDED');
    expect(step.outputs.gcs_uri).toBe(reportUri);
    expect(step.outputs.execution).toMatchObject({
      recoveredFromArtifact: true,
      llm: { requestId: 'resp-crashed', attempts: { total: 2 }, promptId: 'prompt_week_v1' },
    });
  });

  it('does not finalize from (nor hand to recover) a report that is corrupt or of another step: it executes again', async () => {
    const crashed = {
      status: 'RUNNING' as const,
      attempt: 1,
      startedAt: new Date(NOW.getTime() - 900_000).toISOString(),
      lease: {
        owner: 'crashed-worker',
        expiresAt: new Date(NOW.getTime() - 60_000).toISOString(),
      },
    };
    for (const bytes of [
      (_runId: string) => Buffer.from('{"metadata": {"runId":'),
      // the 1M report (valid, of this run) at the 1w report's name
      (runId: string) => serializeReport(previousReport(runId)),
    ]) {
      const client = new ScriptedLlmClient([
        jsonResponse(validReportOutput('## 1w\n\nExecuted again.')),
      ]);
      const { outcome, step, calls } = await deliver({
        client,
        patch: () => stepPatch(REPORT_1W, crashed),
        before: async (fixture) => {
          await fixture.artifacts.put(fixture.reportUri, bytes(fixture.run.runId), {
            contentType: 'application/json',
          });
        },
      });
      expect(calls).toEqual({ executions: 1, recoveries: 0 });
      expect(client.calls).toBe(1);
      // The fresh report differs from what is there: create-only, so an artifact conflict.
      expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'GCS_WRITE_FAILED' });
      expect(step.error).toMatchObject({
        code: 'GCS_WRITE_FAILED',
        retryable: false,
        details: { reason: 'artifact_conflict' },
      });
      expect(step.outputs.execution?.recoveredFromArtifact).toBeUndefined();
    }
  });

  it('keeps a canary from the prompt and the model output out of logs and the run document', async () => {
    const prompts = DEFAULT_PROMPTS.map((p) =>
      p.promptId === 'prompt_week_v1'
        ? {
            ...p,
            systemInstruction: `${p.systemInstruction} ${CANARY}`,
            userPrompt: `${p.userPrompt} ${CANARY}`,
          }
        : p,
    );
    // Invalid twice (first a non-JSON text, then schema-invalid with the canary as key and value).
    const client = new ScriptedLlmClient([
      textResponse(`not json ${CANARY}`),
      jsonResponse({ summary: { [CANARY]: CANARY }, details: CANARY }),
    ]);
    const failed = await deliver({ client, prompts });
    expect(client.calls).toBe(2);
    expect(client.requests[0]?.systemInstruction).toContain(CANARY);
    expect(failed.step.error?.code).toBe('INVALID_STRUCTURED_OUTPUT');
    expect(failed.bytes).toBeNull();
    expect(failed.log.withEvent('structured_output_invalid')).toHaveLength(2);
    expect(JSON.stringify(failed.log.records)).not.toContain(CANARY);
    expect(JSON.stringify(failed.stored)).not.toContain(CANARY);

    // A successful report carries the model's text in the artifact only.
    const ok = await deliver({
      client: new ScriptedLlmClient([jsonResponse(validReportOutput(`## ${CANARY}`))]),
      prompts,
    });
    expect(ok.step.status).toBe('SUCCEEDED');
    expect(ok.bytes?.toString('utf8')).toContain(CANARY);
    expect(JSON.stringify(ok.log.records)).not.toContain(CANARY);
    expect(JSON.stringify(ok.stored)).not.toContain(CANARY);
  });
});

describe('createStepWorker with this handler on an in-memory bus', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('executes a step-ready message into a SUCCEEDED report (offline analyst)', async () => {
    const fixture = await flowFixture();
    const broker = new InMemoryBroker({ timeScale: 0.01 });
    broker.applyTopology(buildTopology());
    cleanups.push(() => broker.close());
    const store = new InMemoryFlowRunStore();
    await store.create(fixture.run);
    const log = createMemoryLogger();
    const { app } = await createStepWorker({
      handler: new LlmReportHandler(
        new LlmStepRuntime({
          registry: new InMemoryPromptRegistry({
            prompts: DEFAULT_PROMPTS,
            schemas: DEFAULT_SCHEMAS,
          }),
          client: new OfflineAnalystClient(),
          logger: log.logger,
        }),
      ),
      store,
      broker,
      artifacts: fixture.artifacts,
      logger: log.logger,
      owner: 'llm-e2e-test',
      policy: { timeoutMs: 780_000 },
      drainTimeoutMs: 2_000,
    });
    await app.listen();
    cleanups.push(() => app.close());
    await new BrokerPublisher({ publisher: broker }).publishStepReady({
      runId: fixture.run.runId,
      stepId: REPORT_1W,
      stepType: 'LLM_REPORT',
      attempt: 0,
      dispatchedAt: NOW.toISOString(),
    });
    await expectEventually(
      async () => {
        const step = (await store.get(fixture.run.runId))?.run.steps[REPORT_1W];
        expect(step?.status).toBe('SUCCEEDED');
      },
      { timeoutMs: 10_000 },
    );
    const report = parseReport(await fixture.artifacts.read(fixture.reportUri));
    expect(report.metadata).toMatchObject({ provider: 'offline', stepId: REPORT_1W });
    const step = (await store.get(fixture.run.runId))?.run.steps[REPORT_1W];
    expect(step?.outputs.execution?.['llm']).toMatchObject({
      provider: 'offline',
      attempts: { total: 1 },
    });
  });
});
