import type { FlowRun, LlmReportFile, Timeframe } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { buildRerun, flowCatalogue } from '@tda/flow-engine';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';
import { renderReport, selectReportSteps } from './report-view';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

const TOKEN = 'test-token-0123456789';
const M1 = 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash';
const W1 = 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash';

/** Flow 1 as in contracts/examples: both LLM reports SUCCEEDED. */
const flow1 = loadExample('flow_run.example.json') as FlowRun;
const report1M = loadExample('llm_report_file.example.json') as LlmReportFile;
const report1w = loadExample('llm_report_file.1w.example.json') as LlmReportFile;

/** A catalogue run with every step SUCCEEDED and a recorded artifact uri. */
function finishedCatalogueRun(flowKey: string, timeframes: [Timeframe, ...Timeframe[]]): FlowRun {
  const run = flowCatalogue.createRun({
    flowKey,
    scope: { symbol: 'BTC-USDT', timeframes },
    ownerId: 'tester',
    trigger: { type: 'USER', source: 'test' },
    now: new Date('2026-01-15T10:00:00Z'),
    random: () => 0.25,
  });
  for (const [id, step] of Object.entries(run.steps)) {
    step.status = 'SUCCEEDED';
    step.outputs = { gcs_uri: `gs://tda-artifacts/runs/${run.runId}/x/${id}.json` };
  }
  run.status = 'SUCCEEDED';
  return run;
}

/** The 1M example re-labelled as the report of another run's step. */
function reportFor(run: FlowRun, stepId: string, markdown: string): LlmReportFile {
  const report = structuredClone(report1M);
  const step = run.steps[stepId];
  report.metadata.runId = run.runId;
  report.metadata.stepId = stepId;
  report.metadata.symbol = run.scope.symbol;
  if (step?.timeframe !== undefined) report.metadata.timeframe = step.timeframe;
  report.output.summary.markdown = markdown;
  return report;
}

/** A rerun of `source` from `fromStepId` (flow-engine buildRerun) whose rerun steps SUCCEEDED. */
function rerunOf(source: FlowRun, fromStepId: string, runId: string): FlowRun {
  const decision = buildRerun(source, { fromStepId, runId, now: new Date('2026-01-16T10:00:00Z') });
  if (decision.kind !== 'rerun') throw new Error(`no rerun: ${decision.kind}`);
  const { run } = decision;
  for (const id of decision.rerun) {
    const step = run.steps[id];
    if (step === undefined) continue;
    step.status = 'SUCCEEDED';
    step.outputs = { gcs_uri: `gs://tda-artifacts/runs/${runId}/x/${id}.json` };
  }
  run.status = 'SUCCEEDED';
  return run;
}

type Answer = FakeApiAnswer;

/** The orchestrator API as far as `tda report` uses it: GET /runs/{id} and the artifact route. */
function reportRoute(
  runs: Map<string, FlowRun>,
  artifacts: Map<string, Answer>,
): (request: FakeApiRequest) => Answer {
  return ({ url, headers }) => {
    const notFound = { status: 404, body: { code: 'NOT_FOUND', message: `no ${url}` } };
    if (headers.authorization !== `Bearer ${TOKEN}`) {
      return { status: 401, body: { code: 'UNAUTHENTICATED', message: 'bad token' } };
    }
    const artifact = /^\/runs\/([^/]+)\/steps\/([^/]+)\/artifact$/.exec(url);
    if (artifact !== null) {
      const key = `${decodeURIComponent(artifact[1] ?? '')}/${decodeURIComponent(artifact[2] ?? '')}`;
      return artifacts.get(key) ?? notFound;
    }
    const run = runs.get(decodeURIComponent(/^\/runs\/([^/]+)$/.exec(url)?.[1] ?? ''));
    return run === undefined ? notFound : { status: 200, body: run };
  };
}

describe('tda report', () => {
  const runs = new Map<string, FlowRun>();
  const artifacts = new Map<string, Answer>();
  let api: FakeApiServer;
  const urls = (): string[] => api.requests.map((request) => request.url);
  let out: string[] = [];
  let err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => ({ baseUrl: api.baseUrl, token: TOKEN, source: 'env' }),
  });
  const stdout = (): string => out.join('');
  const stderr = (): string => err.join('');
  const serve = (run: FlowRun, stepId: string, answer: Answer | LlmReportFile): void => {
    artifacts.set(
      `${run.runId}/${stepId}`,
      'status' in answer ? answer : { status: 200, body: answer },
    );
  };

  beforeAll(async () => {
    api = await startFakeApiServer(reportRoute(runs, artifacts));
  });
  afterAll(() => api.close());
  beforeEach(() => {
    out = [];
    err = [];
    api.requests.length = 0;
    runs.clear();
    artifacts.clear();
  });

  it('prints a header and the summary markdown of each report of flow 1', async () => {
    runs.set(flow1.runId, flow1);
    serve(flow1, M1, report1M);
    serve(flow1, W1, report1w);
    expect(await runCli(['report', flow1.runId], io())).toBe(0);
    const text = stdout();
    expect(text).toContain(`━━ ${M1}\ntimeframe  1M\nmodel      gemini/gemini-2.5-flash\n`);
    expect(text).toContain(`artifact   ${flow1.steps[M1]?.outputs.gcs_uri}\n`);
    expect(text).toContain(report1M.output.summary.markdown);
    expect(text).toContain(report1w.output.summary.markdown);
    expect(text.indexOf(M1)).toBeLessThan(text.indexOf(W1));
    expect(stderr()).toBe('');
    expect(urls()).toEqual([
      `/runs/${flow1.runId}`,
      `/runs/${flow1.runId}/steps/${encodeURIComponent(M1)}/artifact`,
      `/runs/${flow1.runId}/steps/${encodeURIComponent(W1)}/artifact`,
    ]);
  });

  it('orders reports by the DAG (a report after the one it builds on), not by name', async () => {
    const run = finishedCatalogueRun('user_multi_tf_report_v1', ['1d', '4h', '1h']);
    const ids = Object.keys(run.steps)
      .filter((id) => id.startsWith('llm_report:'))
      .sort();
    expect(ids.map((id) => id.split(':')[1])).toEqual(['1d', '1h', '4h']);
    runs.set(run.runId, run);
    for (const id of ids) serve(run, id, reportFor(run, id, `report of ${id.split(':')[1]}`));
    expect(await runCli(['report', run.runId], io())).toBe(0);
    const order = [...stdout().matchAll(/^report of (\w+)$/gm)].map((m) => m[1]);
    expect(order).toEqual(['1d', '4h', '1h']);
  });

  it('--json prints the validated artifacts: an array, or the one object with --step', async () => {
    runs.set(flow1.runId, flow1);
    serve(flow1, M1, report1M);
    serve(flow1, W1, report1w);
    expect(await runCli(['report', flow1.runId, '--json'], io())).toBe(0);
    expect(JSON.parse(stdout())).toEqual([report1M, report1w]);

    out = [];
    expect(await runCli(['report', flow1.runId, '--step', W1, '--json'], io())).toBe(0);
    expect(JSON.parse(stdout())).toEqual(report1w);
  });

  it('exits 1 with a clear message when the run has no succeeded report, without fetching', async () => {
    const running = structuredClone(flow1);
    running.status = 'RUNNING';
    const m1 = running.steps[M1];
    const w1 = running.steps[W1];
    if (m1 === undefined || w1 === undefined) throw new Error('fixture changed');
    m1.status = 'RUNNING';
    m1.outputs = {};
    w1.status = 'PENDING';
    w1.outputs = {};
    runs.set(running.runId, running);
    expect(await runCli(['report', running.runId], io())).toBe(1);
    expect(stderr()).toBe(
      `error CONFLICT: run ${running.runId} (RUNNING) has no succeeded LLM report yet: ${M1}: RUNNING, ${W1}: PENDING\n`,
    );
    expect(stdout()).toBe('');
    expect(urls()).toEqual([`/runs/${running.runId}`]);

    err = [];
    const charts = finishedCatalogueRun('market_charts_v1', ['1M']);
    runs.set(charts.runId, charts);
    expect(await runCli(['report', charts.runId], io())).toBe(1);
    expect(stderr()).toContain(`run ${charts.runId} (market_charts_v1) has no LLM_REPORT steps`);
  });

  it('shows the succeeded reports and notes the others on stderr', async () => {
    const partial = structuredClone(flow1);
    const w1 = partial.steps[W1];
    if (w1 === undefined) throw new Error('fixture changed');
    w1.status = 'FAILED';
    w1.outputs = {};
    w1.error = { code: 'LLM_SAFETY_BLOCK', message: 'blocked', retryable: false };
    runs.set(partial.runId, partial);
    serve(partial, M1, report1M);
    expect(await runCli(['report', partial.runId], io())).toBe(0);
    expect(stdout()).toContain(report1M.output.summary.markdown);
    expect(stdout()).not.toContain(report1w.output.summary.markdown);
    expect(stderr()).toBe(`not shown (not SUCCEEDED): ${W1}: FAILED (LLM_SAFETY_BLOCK)\n`);
  });

  it('refuses an artifact that is not a valid llm_report_file (or not this step’s) and exits 1', async () => {
    runs.set(flow1.runId, flow1);
    const broken = structuredClone(report1w) as unknown as { output: Record<string, unknown> };
    delete broken.output['summary'];
    serve(flow1, M1, report1M);
    serve(flow1, W1, { status: 200, body: broken });
    expect(await runCli(['report', flow1.runId], io())).toBe(1);
    expect(stdout()).toContain(report1M.output.summary.markdown);
    expect(stdout()).not.toContain(W1);
    expect(stderr()).toContain('error UPSTREAM_UNAVAILABLE: 1 of 2 report(s) could not be shown:');
    expect(stderr()).toContain(`${W1}: the artifact is not a valid llm_report_file: /output`);

    err = [];
    out = [];
    serve(flow1, W1, report1M); // the 1M file served for the 1w step
    expect(await runCli(['report', flow1.runId, '--step', W1], io())).toBe(1);
    expect(stdout()).toBe('');
    expect(stderr()).toContain(`${W1}: the artifact belongs to ${flow1.runId} / ${M1}`);
  });

  it('a rerun: a reused step’s report is the producing run’s file (outputs.execution.reusedFrom)', async () => {
    // Rerun of flow 1 from the 1w report: the 1M report is reused, so its artifact (and the
    // runId inside it) is flow 1's; the 1w report was executed by the rerun itself.
    const rerun = rerunOf(flow1, W1, '20260116-100000_BTC-USDT_rrrrr');
    runs.set(rerun.runId, rerun);
    serve(rerun, M1, report1M);
    serve(rerun, W1, reportFor(rerun, W1, 'the rerun 1w report'));
    expect(await runCli(['report', rerun.runId], io())).toBe(0);
    expect(stderr()).toBe('');
    expect(stdout()).toContain(report1M.output.summary.markdown);
    expect(stdout()).toContain(`reused     from run ${flow1.runId}\n`);
    expect(stdout()).toContain('the rerun 1w report');

    // A rerun of that rerun still reads the 1M report as flow 1's (the producing run).
    const second = rerunOf(rerun, W1, '20260117-100000_BTC-USDT_sssss');
    runs.set(second.runId, second);
    serve(second, M1, report1M);
    serve(second, W1, reportFor(second, W1, 'the second rerun 1w report'));
    expect(await runCli(['report', second.runId, '--json'], io())).toBe(0);

    // A reused step must still hold the producing run's file, not any other run's.
    err = [];
    serve(rerun, M1, reportFor(rerun, M1, 'claims to be the rerun 1M report'));
    expect(await runCli(['report', rerun.runId, '--step', M1], io())).toBe(1);
    expect(stderr()).toContain(
      `${M1}: the artifact belongs to ${rerun.runId} / ${M1}, not to this step (reused from ${flow1.runId})`,
    );
  });

  it('reports API errors of the artifact route per step (409, 502)', async () => {
    runs.set(flow1.runId, flow1);
    serve(flow1, M1, {
      status: 502,
      body: {
        code: 'UPSTREAM_UNAVAILABLE',
        message: 'artifact gs://x is recorded by the step but missing in storage',
        details: { reason: 'missing' },
      },
    });
    serve(flow1, W1, report1w);
    expect(await runCli(['report', flow1.runId], io())).toBe(1);
    expect(stdout()).toContain(report1w.output.summary.markdown);
    expect(stderr()).toContain(
      `${M1}: UPSTREAM_UNAVAILABLE (HTTP 502): artifact gs://x is recorded by the step but missing in storage`,
    );
  });

  it('--step must name a SUCCEEDED LLM_REPORT step of the run', async () => {
    runs.set(flow1.runId, flow1);
    expect(await runCli(['report', flow1.runId, '--step', 'ohlcv_export:1M'], io())).toBe(1);
    expect(stderr()).toContain(
      'step ohlcv_export:1M has type OHLCV_EXPORT; tda report shows LLM_REPORT steps',
    );
    err = [];
    expect(await runCli(['report', flow1.runId, '--step', 'nope:1d'], io())).toBe(1);
    expect(stderr()).toContain(`run ${flow1.runId} has no step nope:1d`);
    err = [];
    expect(await runCli(['report', flow1.runId, '--step', 'constructor'], io())).toBe(1);
    expect(stderr()).toContain(`run ${flow1.runId} has no step constructor`);
    expect(urls().some((r) => r.endsWith('/artifact'))).toBe(false);
  });

  it('an unknown run is the API 404', async () => {
    expect(await runCli(['report', '20250115-100000_BTC-USDT_zzzzz'], io())).toBe(1);
    expect(stderr()).toContain('error NOT_FOUND (HTTP 404)');
  });
});

describe('selectReportSteps', () => {
  it('names a step that is not SUCCEEDED with its status', () => {
    const run = structuredClone(flow1);
    const w1 = run.steps[W1];
    if (w1 === undefined) throw new Error('fixture changed');
    w1.status = 'RUNNING';
    expect(() => selectReportSteps(run, W1)).toThrow(
      `step ${W1}: RUNNING: its report exists once the step SUCCEEDED`,
    );
    expect(selectReportSteps(run)).toEqual({ stepIds: [M1], skipped: [`${W1}: RUNNING`] });
  });
});

describe('renderReport of an aggregated report (flow 3)', () => {
  it('names the reports it synthesised instead of a timeframe, and the asOf', () => {
    const aggregate = loadExample('llm_report_file.aggregate.example.json') as LlmReportFile;
    const lines = renderReport({
      stepId: 'llm_report:aggregate:p:m',
      uri: 'gs://b/x.json',
      report: aggregate,
    });
    const refs = aggregate.metadata.inputs.reportRefs ?? [];
    expect(refs.length).toBeGreaterThan(0);
    expect(lines[1]).toMatch(/^timeframe {2}aggregated over rpt_[a-z0-9]{24}/);
    for (const ref of refs) expect(lines[1]).toContain(ref.reportId);
    expect(lines).toContain(`as of      ${String(aggregate.metadata.asOf)}`);
  });
});
