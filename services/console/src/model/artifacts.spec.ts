import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type {
  AccountSnapshot,
  ChartsManifest,
  LlmRecommendationFile,
  LlmReportFile,
  OhlcvExport,
} from '../api/api-types';
import { describe, expect, it } from 'vitest';
import { artifactView, chartFileName, lastCandles, modelMetadata } from './artifacts';

function example<T>(name: string): T {
  return JSON.parse(
    readFileSync(
      resolve(__dirname, '../../../../contracts/examples', `${name}.example.json`),
      'utf8',
    ),
  ) as T;
}
const accountSnapshot = example<AccountSnapshot>('account_snapshot');
const chartsManifest = example<ChartsManifest>('charts_manifest');
const recommendation = example<LlmRecommendationFile>('llm_recommendation_file');
const report = example<LlmReportFile>('llm_report_file');
const ohlcv = example<OhlcvExport>('ohlcv_export');

describe('artifactView (the contract examples)', () => {
  it('recognises each step type’s primary artifact', () => {
    expect(artifactView('CHART_EXPORT', chartsManifest).kind).toBe('charts');
    expect(artifactView('OHLCV_EXPORT', ohlcv).kind).toBe('ohlcv');
    expect(artifactView('LLM_REPORT', report).kind).toBe('report');
    expect(artifactView('LLM_RECOMMENDATION', recommendation).kind).toBe('recommendation');
    expect(artifactView('ACCOUNT_EXPORT', accountSnapshot).kind).toBe('account');
  });

  it('shows anything else, or a file off its contract, as JSON', () => {
    expect(artifactView('BACKTEST', { a: 1 })).toEqual({ kind: 'json', value: { a: 1 } });
    expect(artifactView('LLM_REPORT', ohlcv).kind).toBe('json');
    expect(artifactView('CHART_EXPORT', null).kind).toBe('json');
  });

  it('serves charts by the basename of their object and lists the newest candles first', () => {
    const first = chartsManifest.items[0]?.gcs_uri ?? '';
    expect(chartFileName(first)).toBe('charts:1M:ctpl_default_v1.ctpl_price_ema_v1.png');
    const view = artifactView('OHLCV_EXPORT', ohlcv);
    if (view.kind !== 'ohlcv') throw new Error('not ohlcv');
    const newest = lastCandles(view.export, 20);
    expect(newest.length).toBe(Math.min(20, ohlcv.candles.length));
    expect(newest[0]).toEqual(ohlcv.candles[ohlcv.candles.length - 1]);
  });
});

describe('modelMetadata (seed 002)', () => {
  it('reads model, provider, tokens, requests and repair', () => {
    expect(modelMetadata(report.metadata.llm, report.metadata)).toEqual({
      model: 'gemini-2.5-flash',
      modelVersion: 'gemini-2.5-flash',
      provider: 'gemini',
      promptId: 'prompt_month_v1',
      schemaId: 'llm_report_output_v1',
      finishReason: 'STOP',
      promptTokens: 4187,
      outputTokens: 1264,
      thoughtsTokens: 1462,
      totalTokens: 6913,
      requests: 1,
      repaired: false,
      requestId: 'Yk_hZ4KJOq2Sz7IP7cXv2Ac',
    });
    expect(modelMetadata({ attempts: { total: 2 } })?.repaired).toBe(true);
  });

  it('never carries anything it was not asked for (no prompt text)', () => {
    const meta = modelMetadata({ finishReason: 'STOP', prompt: 'SECRET PROMPT', contents: ['x'] });
    expect(JSON.stringify(meta)).not.toContain('SECRET');
    expect(modelMetadata(undefined)).toBeUndefined();
  });
});
