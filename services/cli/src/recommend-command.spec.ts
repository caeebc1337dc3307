import type { FlowRun, LlmRecommendationFile, LlmReportFile } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { flowCatalogue, reportIdFor } from '@tda/flow-engine';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';
import { normalizeAsOf } from './recommend-command';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiServer,
} from './testing/fake-api.server';

const TOKEN = 'test-token-0123456789';
const RECO = 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash';
const report = (tf: string): string => `llm_report:${tf}:prompt_multi_tf_v1:model_gemini_2_5_flash`;

/** Flow 4 as the orchestrator builds it, every step SUCCEEDED (or the recommendation FAILED). */
function flow4(status: 'SUCCEEDED' | 'FAILED'): FlowRun {
  const run = flowCatalogue.createRun({
    flowKey: 'recommendation_with_account_v1',
    scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: '2026-09-20T00:00:00Z' },
    ownerId: 'tester',
    trigger: { type: 'USER', source: 'tda recommend' },
    now: new Date('2026-11-25T10:00:00Z'),
    random: () => 0.25,
  });
  for (const [id, step] of Object.entries(run.steps)) {
    step.status = id === RECO && status === 'FAILED' ? 'FAILED' : 'SUCCEEDED';
    step.outputs = { gcs_uri: `gs://tda-artifacts/runs/${run.runId}/x/${id}.json` };
  }
  run.status = status;
  if (status === 'FAILED') {
    run.error = {
      code: 'INVALID_STRUCTURED_OUTPUT',
      message: 'stop on the wrong side',
      retryable: false,
    };
  }
  return run;
}

function recommendation(run: FlowRun): LlmRecommendationFile {
  const ref = (tf: '1w' | '1d' | '4h') => ({
    reportId: reportIdFor(run.runId, report(tf)),
    stepId: report(tf),
    timeframe: tf,
    gcsUri: `gs://tda-artifacts/runs/${run.runId}/x/${report(tf)}.json`,
  });
  const reports: LlmRecommendationFile['metadata']['inputs']['reports'] = [
    ref('1w'),
    ref('1d'),
    ref('4h'),
  ];
  return {
    metadata: {
      schemaVersion: 1,
      runId: run.runId,
      stepId: RECO,
      symbol: 'BTC-USDT',
      asOf: '2026-09-20T00:00:00Z',
      lastClose: 81249.99,
      promptId: 'prompt_reco_v1',
      schemaId: 'llm_recommendation_output_v1',
      modelName: 'gemini-2.5-flash',
      provider: 'offline',
      inputs: { ohlcvGcsUri: 'gs://tda-artifacts/runs/x/4h.json', reports, accountId: 'demo' },
      llm: { finishReason: 'STOP', attempts: { total: 1 } },
    },
    output: {
      action: 'HOLD',
      signal_strength: 0.35,
      headline: 'Weekly and daily disagree: wait',
      horizon: { days: 14, label: '1-2 weeks' },
      rationale: {
        summary: 'Mixed.',
        citations: [{ reportId: reports[0].reportId, claim: 'weekly down' }],
      },
      risks: ['Range break either way.'],
    },
  };
}

describe('tda recommend', () => {
  let api: FakeApiServer;
  let run = flow4('SUCCEEDED');
  let out: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => out.push(t) > 0 },
    target: () => ({ baseUrl: api.baseUrl, token: TOKEN, source: 'env' }),
    watchIntervalMs: 5,
  });

  beforeAll(async () => {
    api = await startFakeApiServer(({ method, url }): FakeApiAnswer => {
      if (method === 'POST' && url === '/runs') return { status: 201, body: run };
      if (url === `/runs/${run.runId}`) return { status: 200, body: run };
      const artifact = /\/steps\/([^/]+)\/artifact$/.exec(url);
      const stepId = decodeURIComponent(artifact?.[1] ?? '');
      if (stepId === RECO) return { status: 200, body: recommendation(run) };
      if (stepId.startsWith('llm_report:')) {
        const file = structuredClone(loadExample('llm_report_file.example.json') as LlmReportFile);
        file.output.summary.markdown = `## ${stepId.split(':')[1] ?? ''} picture\nbody`;
        return { status: 200, body: file };
      }
      return { status: 404, body: { code: 'NOT_FOUND', message: url } };
    });
  });
  afterAll(() => api.close());
  beforeEach(() => {
    out = [];
    api.requests.length = 0;
  });

  it('triggers flow 4 for the account and asOf, watches it and prints the recommendation', async () => {
    run = flow4('SUCCEEDED');
    const code = await runCli(
      [
        'recommend',
        'BTC-USDT',
        '--account',
        'demo',
        '--as-of',
        '2026-09-20T02:00:00+02:00',
        '--watch',
      ],
      io(),
    );
    expect(code).toBe(0);
    const posted = api.requests.find((r) => r.method === 'POST');
    expect(JSON.parse(posted?.body ?? '{}')).toMatchObject({
      flowKey: 'recommendation_with_account_v1',
      scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: '2026-09-20T00:00:00Z' },
    });
    const text = out.join('');
    expect(text).toContain('HOLD BTC-USDT  strength 0.35  — Weekly and daily disagree: wait');
    expect(text).toContain('as of       2026-09-20T00:00:00Z');
    expect(text).toContain(`${reportIdFor(run.runId, report('1w'))}  1w 1w picture`);
  });

  it('ends with exit code 1 and the run error when the recommendation failed', async () => {
    run = flow4('FAILED');
    expect(await runCli(['recommend', 'BTC-USDT', '--watch'], io())).toBe(1);
    expect(out.join('')).toContain(
      'ended FAILED: INVALID_STRUCTURED_OUTPUT: stop on the wrong side',
    );
  });

  it('tda run passes --as-of (normalized), --account and --report-ids into the scope', async () => {
    run = flow4('SUCCEEDED');
    const args = [
      'run',
      'aggregated_report_v1',
      '-s',
      'BTC-USDT',
      '--as-of',
      '2026-09-20T02:00:00+02:00',
    ];
    expect(await runCli([...args, '-a', 'demo', '--report-ids', 'rpt_a, rpt_b'], io())).toBe(0);
    const posted = api.requests.find((r) => r.method === 'POST');
    expect(JSON.parse(posted?.body ?? '{}')).toMatchObject({
      flowKey: 'aggregated_report_v1',
      scope: { asOf: '2026-09-20T00:00:00Z', accountId: 'demo', reportIds: ['rpt_a', 'rpt_b'] },
    });
  });

  it('refuses an --as-of that is not a time', () => {
    expect(normalizeAsOf('2026-09-20T00:00:00.000Z')).toBe('2026-09-20T00:00:00Z');
    expect(() => normalizeAsOf('yesterday')).toThrow(/RFC 3339/);
  });
});
