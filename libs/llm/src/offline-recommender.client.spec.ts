import { validate, type AccountSnapshot, type LlmRecommendation } from '@tda/contracts';
import { reportIdFor } from '@tda/flow-engine';
import {
  appliedRiskLimits,
  positionFacts,
  recommendationViolations,
  type RecommendationFacts,
} from '@tda/step-types';
import { describe, expect, it } from 'vitest';
import {
  defaultRecommendationSchema,
  defaultReportSchema,
  DEFAULT_PROMPTS,
} from './default-registry';
import { LlmCallError, type LlmRequest } from './llm-client.port';
import { OfflineAnalystClient } from './offline-analyst.client';
import { OFFLINE_RECOMMENDER_LABEL, reportScore } from './offline-recommendation';
import {
  OFFLINE_RECOMMENDER_MODEL_VERSION,
  OfflineRecommenderClient,
  reportView,
} from './offline-recommender.client';
import { OutputSchemaValidatorCache } from './output-schema';
import { assembleRecommendationPrompt } from './recommendation-prompt-assembly';
import {
  accountPosition,
  accountSnapshotFixture,
  RECO_AS_OF,
  RECO_LAST_CLOSE,
  RECO_RUN_ID,
  recommendationInputReport,
  reportStepIdFor,
  syntheticOhlcvExport,
  type ReportFixture,
} from './testing';

const schema = defaultRecommendationSchema().jsonSchema;
const validator = new OutputSchemaValidatorCache().get(schema);
const prompt = DEFAULT_PROMPTS.find((p) => p.promptId === 'prompt_reco_v1');

function request(reports: ReportFixture[], account?: AccountSnapshot, attempt = 1): LlmRequest {
  if (prompt === undefined) throw new Error('no prompt_reco_v1');
  const limits = appliedRiskLimits(account);
  const assembled = assembleRecommendationPrompt({
    prompt,
    identity: { runId: RECO_RUN_ID, stepId: 'llm_reco:prompt_reco_v1', symbol: 'BTC-USDT' },
    market: {
      asOf: RECO_AS_OF,
      lastClose: RECO_LAST_CLOSE,
      ohlcvUri: `gs://tda-artifacts/runs/${RECO_RUN_ID}/4h/ohlcv_export:4h.json`,
      timeframe: '4h',
      candleOpenTime: '2026-09-19T20:00:00Z',
    },
    reports: reports.map((r) => ({
      reportId: reportIdFor(RECO_RUN_ID, reportStepIdFor(r.timeframe)),
      stepId: reportStepIdFor(r.timeframe),
      timeframe: r.timeframe,
      uri: `gs://tda-artifacts/runs/${RECO_RUN_ID}/${r.timeframe}/${reportStepIdFor(r.timeframe)}.json`,
      json: JSON.stringify(recommendationInputReport(r)),
    })),
    ...(account === undefined
      ? {}
      : {
          account: {
            accountId: account.accountId,
            uri: `gs://tda-artifacts/runs/${RECO_RUN_ID}/_/account_export.json`,
            json: JSON.stringify(account),
          },
        }),
    riskLimits: limits,
  });
  return {
    model: 'gemini-2.5-flash',
    systemInstruction: assembled.systemInstruction,
    contents: assembled.contents,
    generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
    deadlineMs: 1_000,
    context: assembled.context,
    attempt,
  };
}

/** Runs the recommender and checks what every answer must be: schema, contract, invariants. */
async function recommend(
  reports: ReportFixture[],
  account?: AccountSnapshot,
): Promise<LlmRecommendation> {
  const response = await new OfflineRecommenderClient().generate(request(reports, account));
  expect(response).toMatchObject({
    modelVersion: OFFLINE_RECOMMENDER_MODEL_VERSION,
    candidates: [{ finishReason: 'STOP' }],
  });
  const parsed: unknown = JSON.parse(response.text ?? '');
  expect(validator.validate(parsed)).toMatchObject({ ok: true });
  const checked = validate.llmRecommendation(parsed);
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  const facts: RecommendationFacts = {
    lastClose: RECO_LAST_CLOSE,
    reportIds: reports.map((r) => reportIdFor(RECO_RUN_ID, reportStepIdFor(r.timeframe))),
    riskLimits: appliedRiskLimits(account),
    position: positionFacts(account, 'BTC-USDT'),
  };
  expect(recommendationViolations(checked.value, facts)).toEqual([]);
  expect(checked.value.rationale.summary).toContain(OFFLINE_RECOMMENDER_LABEL);
  expect(checked.value.rationale.citations.map((c) => c.reportId)).toEqual(facts.reportIds);
  return checked.value;
}

const BULLISH: ReportFixture[] = [
  { timeframe: '1w', direction: 'bullish', strength: 'strong' },
  { timeframe: '1d', direction: 'bullish', strength: 'moderate' },
  { timeframe: '4h', direction: 'bullish', strength: 'moderate' },
];
const BEARISH: ReportFixture[] = [
  {
    timeframe: '1w',
    direction: 'bearish',
    strength: 'strong',
    supports: [60_000, 57_500],
    resistances: [64_800, 67_000],
  },
  {
    timeframe: '1d',
    direction: 'bearish',
    strength: 'moderate',
    supports: [61_800],
    resistances: [65_200],
  },
  {
    timeframe: '4h',
    direction: 'sideways',
    strength: 'weak',
    supports: [62_900],
    resistances: [64_100],
  },
];

describe('OfflineRecommenderClient (deterministic recommendations from the reports)', () => {
  it('BUY when the reports agree on an uptrend: entry at the nearest support, stop under the next, targets at the resistances', async () => {
    const reco = await recommend(BULLISH, accountSnapshotFixture());
    expect(reco).toMatchObject({
      action: 'BUY',
      entry: { low: 62_400, high: RECO_LAST_CLOSE },
      stopLoss: 60_390,
      takeProfit: [66_200, 68_900],
      horizon: { days: 4, label: '2-5 days' },
    });
    // conviction (score 0.838) × the limit 0.2, floored: 0.167; it risks 0.167 × 4.8 % ≈ 0.8 %
    // of equity to the stop, within the 1 % per-trade limit
    expect(reco.size?.fractionOfEquity).toBe(0.167);
    expect(reco.signal_strength).toBeGreaterThan(0.6);
  });

  it('SELL when they agree on a downtrend and no long is open; the per-trade risk caps the size', async () => {
    const reco = await recommend(BEARISH, accountSnapshotFixture());
    expect(reco.action).toBe('SELL');
    // 0.2 × |score 0.677|, floored; the risk to the stop (3.2 %) is within 1 %
    expect(reco.size?.fractionOfEquity).toBe(0.135);
    const tight = accountSnapshotFixture({
      riskLimits: { maxPositionFraction: 0.2, maxRiskPerTradeFraction: 0.002 },
    });
    // 0.002 / ((65,448 − 63,412.5) / 63,412.5) = 0.0623
    expect((await recommend(BEARISH, tight)).size?.fractionOfEquity).toBe(0.062);
    expect(reco).toMatchObject({
      entry: { high: 64_100 },
      stopLoss: 65_448,
      takeProfit: [62_900, 61_800],
    });
    expect(reco.entry?.low).toBe(RECO_LAST_CLOSE);
    expect(reco.stopLoss).toBeGreaterThan(reco.entry?.high ?? Infinity);
    expect(reco.takeProfit?.[0]).toBeLessThan(reco.entry?.low ?? 0);
  });

  it('REDUCE a long the downtrend runs against, at most the position', async () => {
    const account = accountSnapshotFixture({
      positions: [accountPosition({ fractionOfEquity: 0.15 })],
    });
    const reco = await recommend(BEARISH, account);
    expect(reco).toMatchObject({ action: 'REDUCE', size: { fractionOfEquity: 0.15 } });
    expect(reco.entry).toBeUndefined();
  });

  it('HOLD when the timeframes disagree: no levels, no size', async () => {
    const reco = await recommend([
      { timeframe: '1w', direction: 'bullish', strength: 'moderate' },
      { timeframe: '1d', direction: 'bearish', strength: 'moderate' },
      { timeframe: '4h', direction: 'sideways', strength: 'weak' },
    ]);
    expect(reco.action).toBe('HOLD');
    for (const field of ['entry', 'stopLoss', 'takeProfit', 'size'] as const) {
      expect(reco[field]).toBeUndefined();
    }
    expect(reco.risks).toContain('The 1d report reads the other way: the timeframes disagree.');
  });

  it('HOLD when the long already fills the position limit', async () => {
    const full = accountSnapshotFixture({
      positions: [accountPosition({ fractionOfEquity: 0.2 })],
    });
    expect((await recommend(BULLISH, full)).action).toBe('HOLD');
  });

  it('sizes against the default limit without an account', async () => {
    const reco = await recommend(BULLISH);
    expect(reco.action).toBe('BUY');
    expect(reco.size?.fractionOfEquity).toBe(0.083);
    expect(reco.risks).toContain(
      'No account snapshot: open positions and cash were not considered.',
    );
  });

  it('is deterministic: the same request (and its repair) gives the same bytes', async () => {
    const client = new OfflineRecommenderClient();
    const a = await client.generate(request(BULLISH, accountSnapshotFixture()));
    const b = await client.generate(request(BULLISH, accountSnapshotFixture(), 2));
    expect(b.text).toBe(a.text);
    expect(b.responseId).toBe(a.responseId);
  });

  it('refuses a request without the recommendation context', async () => {
    const error = await new OfflineRecommenderClient()
      .generate({ ...request(BULLISH), context: { symbol: 'BTC-USDT' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ code: 'LLM_PROFILE_INVALID', retryable: false });
  });
});

describe('OfflineRecommenderClient on the offline analyst’s reports (the keyless flow 4 chain)', () => {
  it.each([
    ['an uptrend', 0.004],
    ['a downtrend', -0.004],
  ])('passes the contract and every rule on %s', async (_name, drift) => {
    const analyst = new OfflineAnalystClient();
    const timeframes = ['1w', '1d', '4h'] as const;
    const exports = timeframes.map((timeframe) => syntheticOhlcvExport({ timeframe, drift }));
    const reports = await Promise.all(
      exports.map(async (ohlcv, i) => {
        const answer = await analyst.generate({
          ...request(BULLISH),
          generationConfig: {
            responseMimeType: 'application/json',
            responseJsonSchema: defaultReportSchema().jsonSchema,
          },
          context: { symbol: 'BTC-USDT', timeframe: timeframes[i], ohlcv },
        });
        const stepId = reportStepIdFor(timeframes[i] ?? '1d');
        return {
          reportId: reportIdFor(RECO_RUN_ID, stepId),
          stepId,
          timeframe: timeframes[i] ?? '1d',
          report: { output: JSON.parse(answer.text ?? '') as unknown },
        };
      }),
    );
    const lastClose = exports[2]?.candles.at(-1)?.close ?? 0;
    const account = accountSnapshotFixture();
    const riskLimits = appliedRiskLimits(account);
    const response = await new OfflineRecommenderClient().generate({
      ...request(BULLISH, account),
      context: {
        symbol: 'BTC-USDT',
        recommendation: { asOf: RECO_AS_OF, lastClose, reports, account, riskLimits },
      },
    });
    const checked = validate.llmRecommendation(JSON.parse(response.text ?? ''));
    if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
    expect(
      recommendationViolations(checked.value, {
        lastClose,
        reportIds: reports.map((r) => r.reportId),
        riskLimits,
        position: null,
      }),
    ).toEqual([]);
    expect(checked.value.action).toBe(drift > 0 ? 'BUY' : 'SELL');
  });
});

describe('reportScore / reportView', () => {
  it('weighs longer timeframes more and reads the details tolerantly', () => {
    const views = BULLISH.map((r) =>
      reportView('rpt_x', r.timeframe, recommendationInputReport(r)),
    );
    expect(views[0]).toEqual({
      reportId: 'rpt_x',
      timeframe: '1w',
      direction: 'bullish',
      strength: 'strong',
      bias: 'bullish',
      supports: [62_400, 61_000],
      resistances: [66_200, 68_900],
    });
    expect(reportScore(views)).toBeCloseTo((3 * 1 + 2 * 0.7 + 1.5 * 0.7) / 6.5, 10);
    expect(reportView('rpt_y', undefined, { output: 'garbage' })).toEqual({
      reportId: 'rpt_y',
      supports: [],
      resistances: [],
    });
    expect(reportScore([])).toBe(0);
  });
});
