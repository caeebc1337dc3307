import { existsSync, readFileSync } from 'node:fs';
import { validate, type FlowRun, type LlmReportFile } from '@tda/contracts';
import { DEFAULT_PROMPTS, defaultReportSchema } from '@tda/llm';
import {
  FakeGeminiServer,
  fakeReply,
  textResponseBody,
  validReportOutput,
  type FakeGeminiRequest,
} from '@tda/llm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localPath } from './demo';
import type { LocalStack } from './local-stack';
import { claimsOf, startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';

/**
 * Flow 1 (scheduled_month_week_report_v1) end to end on the real emulators: orchestrator, OHLCV,
 * chart and LLM_REPORT workers composed exactly as `npm start` does, driven through the HTTP API.
 * Once with the offline analyst (no credentials) and once with the Gemini client talking to a
 * local fake of the generateContent endpoint.
 */

const SYMBOL = 'BTC-USDT';
const OHLCV_1M = 'ohlcv_export:1M';
const OHLCV_1W = 'ohlcv_export:1w';
const CHARTS_1M = 'charts:1M:ctpl_default_v1';
const CHARTS_1W = 'charts:1w:ctpl_default_v1';
const REPORT_1M = 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash';
const REPORT_1W = 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function runFlow1(h: E2eStack): Promise<FlowRun> {
  const { run, created } = await h.api.trigger({
    flowKey: 'scheduled_month_week_report_v1',
    scope: { symbol: SYMBOL },
  });
  expect(created).toBe(true);
  return waitForRunStatus(h.api, run.runId, 'SUCCEEDED', 45_000);
}

function step(run: FlowRun, stepId: string): FlowRun['steps'][string] {
  const found = run.steps[stepId];
  if (found === undefined) throw new Error(`run ${run.runId} has no step ${stepId}`);
  return found;
}

function uriOf(run: FlowRun, stepId: string): string {
  const uri = step(run, stepId).outputs.gcs_uri;
  if (uri === undefined) throw new Error(`step ${stepId} has no gcs_uri`);
  return uri;
}

/** The DAG of flow 1, as the orchestrator stored it. */
function expectFlow1Shape(run: FlowRun): void {
  expect(validate.flowRun(run).ok).toBe(true);
  expect(Object.keys(run.steps).sort()).toEqual(
    [CHARTS_1M, CHARTS_1W, REPORT_1M, REPORT_1W, OHLCV_1M, OHLCV_1W].sort(),
  );
  const shape = Object.fromEntries(
    Object.entries(run.steps).map(([id, s]) => [
      id,
      { stepType: s.stepType, timeframe: s.timeframe, dependsOn: [...s.dependsOn].sort() },
    ]),
  );
  expect(shape).toEqual({
    [OHLCV_1M]: { stepType: 'OHLCV_EXPORT', timeframe: '1M', dependsOn: [] },
    [OHLCV_1W]: { stepType: 'OHLCV_EXPORT', timeframe: '1w', dependsOn: [] },
    [CHARTS_1M]: { stepType: 'CHART_EXPORT', timeframe: '1M', dependsOn: [OHLCV_1M] },
    [CHARTS_1W]: { stepType: 'CHART_EXPORT', timeframe: '1w', dependsOn: [OHLCV_1W] },
    [REPORT_1M]: {
      stepType: 'LLM_REPORT',
      timeframe: '1M',
      dependsOn: [CHARTS_1M, OHLCV_1M].sort(),
    },
    [REPORT_1W]: {
      stepType: 'LLM_REPORT',
      timeframe: '1w',
      dependsOn: [CHARTS_1W, REPORT_1M, OHLCV_1W].sort(),
    },
  });
  expect(step(run, REPORT_1M).inputs).toMatchObject({
    ohlcvStepId: OHLCV_1M,
    chartsManifestStepId: CHARTS_1M,
  });
  expect(step(run, REPORT_1M).inputs['previousReportStepIds']).toBeUndefined();
  expect(step(run, REPORT_1W).inputs).toMatchObject({
    ohlcvStepId: OHLCV_1W,
    chartsManifestStepId: CHARTS_1W,
    previousReportStepIds: [REPORT_1M],
  });
  expect(run.progress).toMatchObject({ total: 6, succeeded: 6 });
}

async function readJson(stack: LocalStack, uri: string): Promise<unknown> {
  return JSON.parse((await stack.backends.artifacts.read(uri)).toString('utf8'));
}

async function chartUris(stack: LocalStack, manifestUri: string): Promise<string[]> {
  const manifest = validate.chartsManifest(await readJson(stack, manifestUri));
  if (!manifest.ok) throw new Error(`invalid charts manifest ${manifestUri}`);
  return manifest.value.items.map((item) => item.gcs_uri);
}

/**
 * Both report files exist (also as local files under the data dir), validate as llm_report_file,
 * and their metadata names the right run, step, inputs and provider. Returns them by timeframe.
 */
async function expectReports(
  h: E2eStack,
  run: FlowRun,
  provider: LlmReportFile['metadata']['provider'],
): Promise<{ month: LlmReportFile; week: LlmReportFile }> {
  const reports: LlmReportFile[] = [];
  for (const [stepId, timeframe, ohlcv, charts, previous] of [
    [REPORT_1M, '1M', OHLCV_1M, CHARTS_1M, []],
    [REPORT_1W, '1w', OHLCV_1W, CHARTS_1W, [uriOf(run, REPORT_1M)]],
  ] as const) {
    const uri = uriOf(run, stepId);
    expect(uri).toBe(`gs://tda-artifacts/runs/${run.runId}/${timeframe}/${stepId}.json`);
    expect(await h.stack.backends.artifacts.exists(uri)).toBe(true);
    expect(existsSync(localPath(h.stack.dataDir, uri))).toBe(true);
    const checked = validate.llmReportFile(await readJson(h.stack, uri));
    expect(checked.ok ? [] : checked.issues).toEqual([]);
    if (!checked.ok) throw new Error('unreachable');
    const report = checked.value;
    expect(report.metadata).toMatchObject({
      runId: run.runId,
      stepId,
      symbol: SYMBOL,
      timeframe,
      provider,
      modelName: 'gemini-2.5-flash',
      schemaId: 'llm_report_output_v1',
      inputs: {
        ohlcvGcsUri: uriOf(run, ohlcv),
        chartsManifestGcsUri: uriOf(run, charts),
        chartGcsUris: await chartUris(h.stack, uriOf(run, charts)),
        previousReportGcsUris: [...previous],
      },
    });
    expect(report.metadata.inputs.chartGcsUris?.length).toBeGreaterThanOrEqual(1);
    expect(report.output.summary.markdown.trim().length).toBeGreaterThan(0);

    // The run document carries execution metadata only, never the model's text.
    const execution = step(run, stepId).outputs.execution;
    expect(execution?.llm).toMatchObject({
      provider,
      finishReason: report.metadata.llm.finishReason,
      attempts: { total: report.metadata.llm.attempts.total },
    });
    expect(execution?.llm?.['attempts']).toEqual({ total: 1 });
    const runText = JSON.stringify(run);
    for (const line of report.output.summary.markdown.split('\n')) {
      if (line.trim().length > 12) expect(runText).not.toContain(line.trim());
    }
    reports.push(report);
  }

  // The 1M report finished before the 1w report was claimed (it is the 1w report's input).
  const monthFinished = Date.parse(step(run, REPORT_1M).finishedAt ?? '');
  const weekStarted = Date.parse(step(run, REPORT_1W).outputs.execution?.timing?.startedAt ?? '');
  expect(Number.isNaN(monthFinished)).toBe(false);
  expect(Number.isNaN(weekStarted)).toBe(false);
  expect(monthFinished).toBeLessThanOrEqual(weekStarted);

  // Each step claimed exactly once.
  expect(claimsOf(h.logs, run.runId)).toEqual(
    Object.fromEntries(Object.keys(run.steps).map((id) => [id, 1])),
  );
  const [month, week] = reports;
  if (month === undefined || week === undefined) throw new Error('unreachable');
  return { month, week };
}

describe('flow 1 scheduled_month_week_report_v1 end to end (emulators)', () => {
  describe('offline analyst (no LLM credentials)', () => {
    let h: E2eStack;
    beforeAll(async () => {
      h = await startE2eStack({ name: 'flow1' });
    });
    afterAll(async () => {
      await h?.stack.close();
    });

    it('runs OHLCV -> charts -> 1M report -> 1w report (1M as context) to SUCCEEDED with valid reports', async () => {
      const run = await runFlow1(h);
      expectFlow1Shape(run);
      const { month, week } = await expectReports(h, run, 'offline');
      expect(month.output.summary.markdown).toContain(`${SYMBOL} monthly (1M)`);
      expect(week.output.summary.markdown).toContain(`${SYMBOL} weekly (1w)`);
      // The offline analyst reads the 1M report it was given and says how the week relates.
      expect(week.output.summary.markdown).toContain('(1M) report of this run');
      expect(month.output.summary.markdown).not.toContain('report of this run');
      expect(week.metadata.llm.modelVersion).toBe('offline-analyst-v1');
    }, 60_000);
  });

  describe('Gemini provider against a fake generateContent endpoint', () => {
    const apiKey = 'fake-gemini-key-for-e2e';
    let fake: FakeGeminiServer;
    let h: E2eStack;
    beforeAll(async () => {
      fake = await FakeGeminiServer.start({ apiKey });
      h = await startE2eStack({
        name: 'flow1',
        env: { GEMINI_API_KEY: apiKey, TDA_GEMINI_BASE_URL: fake.baseUrl },
      });
    });
    afterAll(async () => {
      await h?.stack.close();
      await fake?.close();
    });

    const partsOf = (request: FakeGeminiRequest | undefined): Record<string, unknown>[] =>
      request?.body?.contents?.flatMap((content) => content.parts ?? []) ?? [];
    const textOf = (parts: Record<string, unknown>[]): string[] =>
      parts.flatMap((part) => (typeof part['text'] === 'string' ? [part['text']] : []));
    const imagesOf = (parts: Record<string, unknown>[]): { mimeType: unknown; data: Buffer }[] =>
      parts.flatMap((part) => {
        const inline = part['inlineData'] as { mimeType?: unknown; data?: unknown } | undefined;
        return inline !== undefined && typeof inline.data === 'string'
          ? [{ mimeType: inline.mimeType, data: Buffer.from(inline.data, 'base64') }]
          : [];
      });

    it('sends two structured-output requests with charts and the 1M report as 1w context', async () => {
      // Answers are consumed in arrival order: the 1w report cannot start before the 1M one ends.
      const monthMarkdown = `## ${SYMBOL} monthly (1M) from fake Gemini\n\nMONTH-CANARY-7f3a: the monthly trend is up.`;
      const weekMarkdown = `## ${SYMBOL} weekly (1w) from fake Gemini\n\nWEEK-CANARY-19bc: the week follows the month.`;
      fake.enqueue(
        fakeReply.ok(textResponseBody(JSON.stringify(validReportOutput(monthMarkdown)))),
        fakeReply.ok(
          textResponseBody(JSON.stringify(validReportOutput(weekMarkdown)), {
            responseId: 'fake-response-2',
          }),
        ),
      );

      const run = await runFlow1(h);
      expectFlow1Shape(run);
      const { month, week } = await expectReports(h, run, 'gemini');
      expect(month.output.summary.markdown).toBe(monthMarkdown);
      expect(week.output.summary.markdown).toBe(weekMarkdown);
      expect(month.metadata.llm).toMatchObject({
        finishReason: 'STOP',
        modelVersion: 'fake-model-001',
        requestId: 'fake-response-1',
      });
      expect(week.metadata.llm.requestId).toBe('fake-response-2');

      expect(fake.callCount).toBe(2);
      expect(fake.remainingReplies).toBe(0);
      const [monthRequest, weekRequest] = fake.requests;
      const prompts = { '1M': 'prompt_month_v1', '1w': 'prompt_week_v1' } as const;
      const monthUri = uriOf(run, REPORT_1M);
      for (const [request, timeframe, charts] of [
        [monthRequest, '1M', CHARTS_1M],
        [weekRequest, '1w', CHARTS_1W],
      ] as const) {
        expect(request).toMatchObject({
          api: 'gemini',
          model: 'gemini-2.5-flash',
          auth: 'api-key-header',
          aborted: false,
        });
        const body = request?.body;
        const prompt = DEFAULT_PROMPTS.find((p) => p.promptId === prompts[timeframe]);
        expect(prompt).toBeDefined();
        expect(textOf(body?.systemInstruction?.parts ?? []).join('')).toBe(
          prompt?.systemInstruction,
        );
        expect(body?.generationConfig).toMatchObject({
          responseMimeType: 'application/json',
          responseJsonSchema: defaultReportSchema().jsonSchema,
          candidateCount: 1,
        });
        const parts = partsOf(request);
        const texts = textOf(parts);
        expect(texts[0]).toContain(`- Symbol: ${SYMBOL}`);
        expect(texts[0]).toContain(`- Timeframe: ${timeframe}`);
        expect(texts[0]).toContain(`- Run: ${run.runId}`);
        // The chart PNGs of this timeframe, byte for byte, as inline image parts.
        const images = imagesOf(parts);
        const stored = await Promise.all(
          (await chartUris(h.stack, uriOf(run, charts))).map((uri) =>
            h.stack.backends.artifacts.read(uri),
          ),
        );
        expect(images.length).toBe(stored.length);
        images.forEach((image, index) => {
          expect(image.mimeType).toBe('image/png');
          expect(image.data.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
          expect(image.data.equals(stored[index] ?? Buffer.alloc(0))).toBe(true);
        });
        const previousParts = texts.filter((t) => t.includes('Earlier report of this run'));
        if (timeframe === '1M') expect(previousParts).toEqual([]);
        else {
          // The 1w request carries the stored 1M report file, unchanged, as its own part.
          const monthFile = (await h.stack.backends.artifacts.read(monthUri)).toString('utf8');
          const contextPart = texts.find((t) => t.startsWith('Input 3: Earlier report'));
          expect(contextPart).toContain(monthUri);
          expect(contextPart?.endsWith(monthFile)).toBe(true);
          expect(contextPart).toContain('MONTH-CANARY-7f3a');
        }
      }
      // The model's text stays out of the logs.
      const logText = JSON.stringify(h.logs.records);
      expect(logText).not.toContain('MONTH-CANARY-7f3a');
      expect(logText).not.toContain('WEEK-CANARY-19bc');
      expect(readFileSync(localPath(h.stack.dataDir, monthUri), 'utf8')).toContain(
        'MONTH-CANARY-7f3a',
      );
    }, 60_000);
  });
});
