import type { LlmRecommendationFile, LlmReportFile } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { reportIdFor } from '@tda/flow-engine';
import { makeRecommendationEntry, makeReportEntry } from '@tda/report-index/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

const TOKEN = 'test-token-0123456789';
const CURSOR = 'eyJ2IjoxfQ';

const report = makeReportEntry({ variant: 'a', headline: 'BTC-USDT daily: higher lows' });
const cited = makeReportEntry({ variant: 'c', timeframe: '1w', headline: 'Weekly range floor' });
const uncited = reportIdFor(report.runId, 'llm_report:4h:prompt_multi_tf_v1:model_gone');
const reco = makeRecommendationEntry({ reportIds: [cited.reportId, uncited] });

function reportFile(): LlmReportFile {
  const example = loadExample('llm_report_file.example.json') as LlmReportFile;
  return {
    metadata: { ...example.metadata, runId: report.runId, stepId: report.stepId },
    output: { ...example.output, summary: { markdown: '## Daily\n\nHigher lows above 80k.' } },
  };
}

function recommendationFile(): LlmRecommendationFile {
  const report = (reportId: string, stepId: string, timeframe: '1w' | '4h') => ({
    reportId,
    stepId,
    timeframe,
    gcsUri: `gs://tda-artifacts/runs/${reco.runId}/${stepId}.json`,
  });
  return {
    metadata: {
      schemaVersion: 1,
      runId: reco.runId,
      stepId: reco.stepId,
      symbol: 'BTC-USDT',
      asOf: '2026-09-20T00:00:00Z',
      lastClose: 81249.99,
      promptId: 'prompt_reco_v1',
      schemaId: 'llm_recommendation_output_v1',
      modelName: 'gemini-2.5-flash',
      provider: 'gemini',
      inputs: {
        ohlcvGcsUri: `gs://tda-artifacts/runs/${reco.runId}/ohlcv.json`,
        reports: [
          report(cited.reportId, cited.stepId, '1w'),
          report(uncited, 'llm_report:4h:prompt_multi_tf_v1:model_gone', '4h'),
        ],
      },
      llm: { finishReason: 'STOP', attempts: { total: 1 } },
    },
    output: {
      action: 'BUY',
      signal_strength: 0.62,
      headline: 'Buy the 4h pullback',
      entry: { low: 80500, high: 81300 },
      stopLoss: 77800,
      takeProfit: [84500],
      size: { fractionOfEquity: 0.05 },
      horizon: { days: 14, label: '1-2 weeks' },
      rationale: {
        summary: 'The weekly floor holds and the daily trend is up.',
        citations: [{ reportId: cited.reportId, claim: 'the weekly range floor holds' }],
      },
      risks: ['A weekly close below 77,800 invalidates the idea.'],
    },
  };
}

/** Answers the index routes and the artifact route like the orchestrator does. */
function indexRoute(): (request: FakeApiRequest) => FakeApiAnswer {
  const artifact = (runId: string, stepId: string) =>
    `/runs/${runId}/steps/${encodeURIComponent(stepId)}/artifact`;
  return ({ url }) => {
    const path = url.split('?')[0] ?? '';
    if (path === '/reports') {
      return {
        status: 200,
        body: { reports: [report, cited], nextCursor: url.includes('cursor=') ? null : CURSOR },
      };
    }
    if (path === `/reports/${report.reportId}`) return { status: 200, body: report };
    if (path === `/reports/${cited.reportId}`) return { status: 200, body: cited };
    if (path === '/recommendations') {
      return { status: 200, body: { recommendations: [reco], nextCursor: null } };
    }
    if (path === `/recommendations/${reco.recoId}`) return { status: 200, body: reco };
    if (path === artifact(report.runId, report.stepId)) return { status: 200, body: reportFile() };
    if (path === artifact(reco.runId, reco.stepId)) {
      return { status: 200, body: recommendationFile() };
    }
    if (path === '/admin/index/backfill') {
      return {
        status: 200,
        body: {
          dryRun: true,
          scannedRuns: 12,
          truncated: false,
          counts: { created: 0, wouldCreate: 1, alreadyIndexed: 4, unreadable: 1 },
          items: [
            {
              runId: report.runId,
              stepId: report.stepId,
              kind: 'report',
              id: report.reportId,
              outcome: 'would_create',
            },
            {
              runId: reco.runId,
              stepId: reco.stepId,
              kind: 'recommendation',
              id: reco.recoId,
              outcome: 'unreadable',
              reason: 'missing',
            },
          ],
          itemsTruncated: false,
        },
      };
    }
    return { status: 404, body: { code: 'NOT_FOUND', message: `no ${path}` } };
  };
}

describe('tda reports / recommendations', () => {
  let api: FakeApiServer;
  let out: string[] = [];
  let err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => ({ baseUrl: api.baseUrl, token: TOKEN, source: 'env' }),
  });
  const query = (n: number): Record<string, string> =>
    Object.fromEntries(new URL(api.requests[n]?.url ?? '', api.baseUrl).searchParams);
  const printed = (): string => out.join('');

  beforeAll(async () => {
    api = await startFakeApiServer(indexRoute());
  });
  afterAll(() => api.close());
  beforeEach(() => {
    out = [];
    err = [];
    api.requests.length = 0;
  });

  it('reports list: one line per report, the filters sent, a next-page command', async () => {
    const argv = ['reports', 'list', '--symbol', 'btc/usdt', '--timeframe', '1d'];
    argv.push('--as-of', '2026-09-20T00:00:00Z', '--limit', '2');
    expect(await runCli(argv, io())).toBe(0);
    expect(query(0)).toEqual({
      symbol: 'btc/usdt',
      timeframe: '1d',
      asOf: '2026-09-20T00:00:00Z',
      limit: '2',
    });
    const lines = printed().trim().split('\n');
    expect(lines[0]).toContain(report.reportId);
    expect(lines[0]).toContain('BTC-USDT daily: higher lows');
    expect(lines[0]).toContain('bullish 0.60');
    expect(lines[2]).toBe(
      `next page: tda reports list --symbol btc/usdt --timeframe 1d --as-of 2026-09-20T00:00:00Z --limit 2 --cursor ${CURSOR}`,
    );
    expect(await runCli(['reports', 'list', '--limit', '0'], io())).toBe(1);
  });

  it('reports show: the entry, then the Markdown read through the artifact route', async () => {
    expect(await runCli(['reports', 'show', report.reportId], io())).toBe(0);
    expect(api.requests.map((r) => r.url)).toEqual([
      `/reports/${report.reportId}`,
      `/runs/${report.runId}/steps/${encodeURIComponent(report.stepId)}/artifact`,
    ]);
    const text = printed();
    expect(text).toContain(`━━ ${report.reportId}  BTC-USDT daily: higher lows`);
    expect(text).toContain(`run         ${report.runId}  step ${report.stepId}`);
    expect(text).toContain('signal      bullish (confidence 0.60)');
    expect(text).toContain('## Daily\n\nHigher lows above 80k.');
  });

  it('reports show of an unknown id: the API error, exit 1', async () => {
    expect(await runCli(['reports', 'show', 'rpt_000000000000000000000000'], io())).toBe(1);
    expect(err.join('')).toContain('error NOT_FOUND (HTTP 404)');
  });

  it('reports backfill: a dry run unless --apply; counts and items', async () => {
    expect(await runCli(['reports', 'backfill'], io())).toBe(0);
    expect(JSON.parse(api.requests[0]?.body ?? '')).toEqual({ apply: false });
    const text = printed();
    expect(text).toContain(
      'dry run: would create 1, already indexed 4, unreadable 1 (12 runs scanned)',
    );
    expect(text).toContain(`unreadable    ${reco.recoId}`);
    expect(text).toContain('(missing)');
    expect(text).toContain('tda reports backfill --apply');
    expect(await runCli(['reports', 'backfill', '--apply'], io())).toBe(0);
    expect(JSON.parse(api.requests[1]?.body ?? '')).toEqual({ apply: true });
  });

  it('recommendations list: --min-strength is sent and checked', async () => {
    expect(await runCli(['recommendations', 'list', '--min-strength', '0.5'], io())).toBe(0);
    expect(query(0)).toEqual({ minStrength: '0.5' });
    expect(printed()).toContain(`${reco.recoId}`);
    expect(printed()).toContain('BUY     0.62');
    expect(await runCli(['recommendations', 'list', '--min-strength', '2'], io())).toBe(1);
    expect(err.join('')).toContain('--min-strength must be a number in 0..1');
  });

  it('recommendations show: action, levels, asOf, the rationale with the cited report headlines', async () => {
    expect(await runCli(['recommendations', 'show', reco.recoId], io())).toBe(0);
    const text = printed();
    expect(text).toContain('BUY BTC-USDT  strength 0.62');
    expect(text).toContain('as of       2026-09-20T00:00:00Z');
    expect(text).toContain('stop        77,800');
    expect(text).toContain(`${cited.reportId}  1w Weekly range floor`);
    expect(text).toContain(`${uncited}  4h (not in the index; tda reports backfill)`);
    expect(text).toContain('The weekly floor holds and the daily trend is up.');
    expect(text).toContain(
      `- the weekly range floor holds  [${cited.reportId}: Weekly range floor]`,
    );
  });
});
