import type { LlmRecommendationFile } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import {
  parseRecommendationFile,
  renderRecommendation,
  reportHeadline,
  terminalText,
} from './recommendation-view';

const REPORT = 'rpt_0123456789abcdef01234567';

function file(output: Partial<LlmRecommendationFile['output']> = {}): LlmRecommendationFile {
  return {
    metadata: {
      schemaVersion: 1,
      runId: '20260920-000000_BTC-USDT_abc12',
      stepId: 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash',
      symbol: 'BTC-USDT',
      asOf: '2026-09-20T00:00:00Z',
      lastClose: 81249.99,
      promptId: 'prompt_reco_v1',
      schemaId: 'llm_recommendation_output_v1',
      modelName: 'gemini-2.5-flash',
      provider: 'offline',
      inputs: {
        ohlcvGcsUri: 'gs://tda-artifacts/runs/r/4h/ohlcv_export-4h.json',
        reports: [
          {
            reportId: REPORT,
            stepId: 'llm_report:1d:p:m',
            gcsUri: 'gs://tda-artifacts/runs/r/1d/report.json',
          },
        ],
        accountId: 'demo',
      },
      llm: { finishReason: 'STOP', attempts: { total: 1 } },
    },
    output: {
      action: 'BUY',
      signal_strength: 0.62,
      headline: 'Trend resumes\u001b[31m above the weekly pivot',
      entry: { low: 80500, high: 81300 },
      stopLoss: 77800,
      takeProfit: [84500, 88000],
      size: { fractionOfEquity: 0.05 },
      horizon: { days: 14, label: '1-2 weeks' },
      rationale: { summary: 'Daily trend up.', citations: [{ reportId: REPORT, claim: 'up' }] },
      risks: ['A weekly close below 77,800 invalidates the idea.'],
      ...output,
    },
  };
}

describe('renderRecommendation', () => {
  it('prints action, strength, levels, size, asOf, producer, the reports and the risks', () => {
    const text = renderRecommendation(file(), [
      { reportId: REPORT, timeframe: '1d', headline: 'BTC-USDT 1d: uptrend intact' },
    ]);
    expect(text.split('\n')).toEqual([
      'BUY BTC-USDT  strength 0.62  — Trend resumes[31m above the weekly pivot',
      'as of       2026-09-20T00:00:00Z (last close 81,250)',
      'entry       80,500 - 81,300',
      'stop        77,800',
      'targets     84,500, 88,000',
      'size        5.0% of equity',
      'horizon     1-2 weeks (14 days)',
      'by          offline recommender (deterministic, no model)',
      'account     demo',
      'rests on',
      `  ${REPORT}  1d BTC-USDT 1d: uptrend intact`,
      'risks',
      '  - A weekly close below 77,800 invalidates the idea.',
    ]);
    expect(text).not.toContain('\u001b');
  });

  it('leaves the trade lines out of a HOLD and names the model that produced it', () => {
    const hold = file({ action: 'HOLD' });
    delete hold.output.entry;
    delete hold.output.stopLoss;
    delete hold.output.takeProfit;
    delete hold.output.size;
    hold.metadata.provider = 'gemini';
    const text = renderRecommendation(hold);
    expect(text).toMatch(/^HOLD BTC-USDT {2}strength 0\.62/);
    expect(text).not.toMatch(/entry|stop|targets|size/);
    expect(text).toContain('by          gemini gemini-2.5-flash');
  });
});

describe('helpers', () => {
  it('reportHeadline takes the first non-empty Markdown line', () => {
    expect(reportHeadline('\n\n## BTC 1d: range\nbody')).toBe('BTC 1d: range');
    expect(reportHeadline('   ')).toBe('(empty report)');
  });

  it('terminalText flattens lines and truncates', () => {
    expect(terminalText('a\nb\u0007c', 10)).toBe('a bc');
    expect(terminalText('x'.repeat(20), 10)).toBe('xxxxxxx...');
  });

  it('parseRecommendationFile accepts a valid file only', () => {
    expect(parseRecommendationFile(file())).toBeDefined();
    expect(parseRecommendationFile({ metadata: {} })).toBeUndefined();
  });
});
