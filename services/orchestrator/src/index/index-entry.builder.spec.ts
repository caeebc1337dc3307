import { validate, type FlowRun } from '@tda/contracts';
import { recommendationIdFor, reportIdFor } from '@tda/flow-engine';
import { describe, expect, it } from 'vitest';
import {
  artifactUriOf,
  RECO_STEP,
  recommendationFileFor,
  REPORT_STEP,
  reportFileFor,
  runWithLlmSteps,
} from '../testing/index.fixtures';
import {
  buildRecommendationIndexEntry,
  buildReportIndexEntry,
  markdownHeadline,
  plainText,
  producerOf,
  reportSignals,
} from './index-entry.builder';

function reportEntry(run: FlowRun, markdown?: string) {
  const file = reportFileFor(run.runId, REPORT_STEP, markdown);
  return buildReportIndexEntry(run, REPORT_STEP, {
    uri: artifactUriOf(run.runId, REPORT_STEP),
    file,
  });
}

describe('buildReportIndexEntry', () => {
  it('builds a contract-valid entry from the run and the artifact alone', () => {
    const run = runWithLlmSteps();
    const entry = reportEntry(run);
    expect(validate.reportIndex(entry).ok).toBe(true);
    expect(entry).toEqual({
      schemaVersion: 1,
      reportId: reportIdFor(run.runId, REPORT_STEP),
      ownerId: 'alice',
      runId: run.runId,
      stepId: REPORT_STEP,
      flowKey: 'recommendation_with_account_v1',
      symbol: 'BTC-USDT',
      symbolKey: 'BTCUSDT',
      timeframe: '1d',
      asOf: '2026-09-20T00:00:00.000Z',
      provider: 'gemini',
      modelName: 'gemini-2.5-flash',
      promptId: 'prompt_month_v1',
      headline: 'BTC-USDT daily: higher lows above the weekly pivot',
      bias: 'sideways',
      confidence: 0.6,
      createdAt: '2026-09-20T00:06:01.250Z',
      gcs_uri: artifactUriOf(run.runId, REPORT_STEP),
    });
    // Pure: the same inputs give the same entry (the live path and the backfill agree).
    expect(reportEntry(run)).toEqual(entry);
  });

  it('takes asOf from the run createdAt for runs without scope.asOf, and createdAt from the run when the step has no finishedAt', () => {
    const base = runWithLlmSteps({ scope: { symbol: 'btc/usdt' } });
    const step = base.steps[REPORT_STEP];
    if (step === undefined) throw new Error('fixture');
    const { finishedAt: _dropped, ...unfinished } = step;
    const run = {
      ...base,
      updatedAt: '2026-09-20T00:09:00Z',
      steps: { ...base.steps, [REPORT_STEP]: unfinished },
    };
    const entry = reportEntry(run);
    expect(entry.asOf).toBe('2026-09-20T00:05:12.000Z');
    expect(entry.createdAt).toBe('2026-09-20T00:09:00.000Z');
    expect(entry.symbol).toBe('btc/usdt');
    expect(entry.symbolKey).toBe('BTCUSDT');
  });

  it('names a step a rerun reused after its producer, whose entry it already is', () => {
    const source = runWithLlmSteps({ suffix: 'src' });
    const rerun = runWithLlmSteps({ suffix: 'new' });
    const step = rerun.steps[REPORT_STEP];
    if (step === undefined) throw new Error('fixture');
    rerun.steps[REPORT_STEP] = {
      ...step,
      outputs: {
        gcs_uri: artifactUriOf(source.runId, REPORT_STEP),
        execution: { reusedFrom: { runId: source.runId, stepId: REPORT_STEP } },
      },
    };
    expect(producerOf(rerun, REPORT_STEP)).toEqual({ runId: source.runId, stepId: REPORT_STEP });
    const file = reportFileFor(source.runId, REPORT_STEP);
    const entry = buildReportIndexEntry(rerun, REPORT_STEP, {
      uri: artifactUriOf(source.runId, REPORT_STEP),
      file,
    });
    expect(entry).toMatchObject({
      reportId: reportIdFor(source.runId, REPORT_STEP),
      runId: source.runId,
    });
  });
});

describe('markdownHeadline', () => {
  it.each([
    ['## BTC weekly: **range** floor\n\nbody', 'BTC weekly: range floor'],
    ['\n\n   \n# Title #\ntext', 'Title'],
    ['---\n> *Quoted* [link](https://x.test/a) and `code`', 'Quoted link and code'],
    ['- first item\n- second', 'first item'],
    ['1. numbered', 'numbered'],
    ['![chart](gs://b/c.png) caption', 'chart caption'],
    ['a\u0007b\tc', 'a b c'],
    ['\n***\n', ''],
  ])('%j -> %j', (markdown, headline) => {
    expect(markdownHeadline(markdown)).toBe(headline);
  });

  it('cuts at 200 characters with an ellipsis', () => {
    const headline = markdownHeadline(`# ${'word '.repeat(100)}`);
    expect(headline).toHaveLength(200);
    expect(headline.endsWith('…')).toBe(true);
    // No half of a surrogate pair before the ellipsis.
    expect(plainText(`${'x'.repeat(198)}😀yy`, 200)).toBe(`${'x'.repeat(198)}…`);
  });

  it('falls back to "<symbol> <timeframe> report" when the markdown has no text', () => {
    expect(reportEntry(runWithLlmSteps(), '\n---\n').headline).toBe('BTC-USDT 1d report');
  });
});

describe('reportSignals', () => {
  it('reads bias from trend.direction and confidence from details.confidence, else trend.strength', () => {
    expect(
      reportSignals({ trend: { direction: 'bearish', strength: 'strong' }, confidence: 0.25 }),
    ).toEqual({
      bias: 'bearish',
      confidence: 0.25,
    });
    expect(reportSignals({ trend: { direction: 'bullish', strength: 'weak' } })).toEqual({
      bias: 'bullish',
      confidence: 0.3,
    });
    expect(reportSignals({ trend: { strength: 'strong' }, confidence: 7 })).toEqual({
      confidence: 0.9,
    });
    expect(reportSignals({ trend: { direction: 'up', strength: 'huge' } })).toEqual({});
    expect(reportSignals('not an object')).toEqual({});
  });
});

describe('buildRecommendationIndexEntry', () => {
  it('builds a contract-valid entry with the cited reports and a terminal-safe headline', () => {
    const run = runWithLlmSteps();
    const file = recommendationFileFor(run.runId, RECO_STEP);
    const entry = buildRecommendationIndexEntry(run, RECO_STEP, {
      uri: artifactUriOf(run.runId, RECO_STEP),
      file,
    });
    expect(validate.recommendationIndex(entry).ok).toBe(true);
    expect(entry).toEqual({
      schemaVersion: 1,
      recoId: recommendationIdFor(run.runId, RECO_STEP),
      ownerId: 'alice',
      runId: run.runId,
      stepId: RECO_STEP,
      flowKey: 'recommendation_with_account_v1',
      symbol: 'BTC-USDT',
      symbolKey: 'BTCUSDT',
      asOf: '2026-09-20T00:00:00.000Z',
      accountId: 'demo',
      action: 'BUY',
      signal_strength: 0.62,
      headline: 'Trend resumes [31m above the weekly pivot',
      provider: 'offline',
      modelName: 'gemini-2.5-flash',
      reportIds: [reportIdFor(run.runId, REPORT_STEP)],
      createdAt: '2026-09-20T00:07:31.204Z',
      gcs_uri: artifactUriOf(run.runId, RECO_STEP),
    });
  });
});
