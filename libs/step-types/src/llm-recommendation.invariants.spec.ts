import type { AccountSnapshot, LlmRecommendation, LlmRecommendationFile } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import {
  appliedRiskLimits,
  DEFAULT_MAX_POSITION_FRACTION,
  llmRecommendationFileProblem,
  plausibleBand,
  positionFacts,
  recommendationOutputViolations,
  recommendationViolations,
  type RecommendationFacts,
} from './llm-recommendation.invariants';
import { LLM_RECOMMENDATION_STEP } from './llm-recommendation.step-type';

const FILE = loadExample('llm_recommendation_file.example.json') as LlmRecommendationFile;
/** The contract example: BUY 62,400-63,500, stop 60,800, targets 66,200 / 68,900, size 0.12. */
const BUY = loadExample('llm_recommendation.example.json') as LlmRecommendation;
const REPORT_IDS = FILE.metadata.inputs.reports.map((r) => r.reportId);
const FACTS: RecommendationFacts = {
  lastClose: 63_412.5,
  reportIds: REPORT_IDS,
  riskLimits: { maxPositionFraction: 0.2, maxRiskPerTradeFraction: 0.01 },
  position: null,
};

function rules(output: LlmRecommendation, facts: Partial<RecommendationFacts> = {}): string[] {
  return recommendationViolations(output, { ...FACTS, ...facts }).map((v) => v.rule);
}

const SELL: LlmRecommendation = {
  ...BUY,
  action: 'SELL',
  entry: { low: 63_400, high: 64_500 },
  stopLoss: 66_000,
  takeProfit: [61_000, 58_500],
  size: { fractionOfEquity: 0.1 },
};

function hold(): LlmRecommendation {
  const { entry: _e, stopLoss: _s, takeProfit: _t, size: _z, ...rest } = BUY;
  return { ...rest, action: 'HOLD' };
}

function account(positions: AccountSnapshot['positions']): AccountSnapshot {
  return {
    schemaVersion: 1,
    runId: FILE.metadata.runId,
    stepId: 'account_export',
    accountId: 'demo',
    source: { provider: 'paper' },
    asOf: '2026-09-20T00:00:00Z',
    quoteCurrency: 'USDT',
    equity: 20_000,
    freeCash: 15_000,
    positions,
    riskLimits: { maxPositionFraction: 0.25 },
  };
}

const LONG = {
  symbol: 'BTC-USDT',
  side: 'long' as const,
  size: 0.08,
  averageEntry: 60_000,
  markPrice: 62_500,
  marketValue: 5_000,
  unrealizedPnl: 200,
};

describe('recommendationViolations', () => {
  it('accepts the contract examples (BUY) and their SELL and HOLD mirrors', () => {
    expect(rules(BUY)).toEqual([]);
    expect(rules(SELL)).toEqual([]);
    expect(rules(hold())).toEqual([]);
  });

  it('HOLD has no levels and no size; BUY/SELL need entry, stop and size', () => {
    expect(rules({ ...BUY, action: 'HOLD' })).toEqual([
      'hold_has_no_levels',
      'hold_has_no_levels',
      'hold_has_no_levels',
      'hold_has_no_levels',
    ]);
    const { stopLoss: _s, size: _z, ...bare } = BUY;
    expect(rules(bare)).toEqual(['trade_needs_levels', 'trade_needs_levels']);
  });

  it('BUY: stop below the entry, targets above it and ascending; entry.low <= entry.high', () => {
    expect(rules({ ...BUY, stopLoss: 62_500 })).toEqual(['buy_stop_below_entry']);
    expect(rules({ ...BUY, takeProfit: [68_900, 66_200] })).toEqual(['buy_targets_ascending']);
    expect(rules({ ...BUY, takeProfit: [63_000] })).toEqual(['buy_targets_above_entry']);
    expect(rules({ ...BUY, entry: { low: 63_500, high: 62_400 } })).toContain(
      'entry_low_not_above_high',
    );
  });

  it('SELL: stop above the entry, targets below it and descending', () => {
    expect(rules({ ...SELL, stopLoss: 64_000 })).toEqual(['sell_stop_above_entry']);
    expect(rules({ ...SELL, takeProfit: [58_500, 61_000] })).toEqual(['sell_targets_descending']);
    expect(rules({ ...SELL, takeProfit: [63_500] })).toEqual(['sell_targets_below_entry']);
  });

  it('sizes within the position limit (the default without an account) and the per-trade risk', () => {
    expect(rules(BUY, { riskLimits: { maxPositionFraction: 0.1 } })).toEqual([
      'size_within_position_limit',
    ]);
    expect(appliedRiskLimits(undefined)).toEqual({
      source: 'default',
      maxPositionFraction: DEFAULT_MAX_POSITION_FRACTION,
    });
    expect(DEFAULT_MAX_POSITION_FRACTION).toBe(0.1);
    // 0.12 × (63,500 − 55,000) / 63,500 ≈ 0.016 > 0.01
    expect(rules({ ...BUY, stopLoss: 55_000 })).toEqual(['risk_per_trade_within_limit']);
    expect(
      rules({ ...BUY, stopLoss: 55_000 }, { riskLimits: { maxPositionFraction: 0.2 } }),
    ).toEqual([]);
  });

  it('keeps every level within the plausibility band of the last close (wider past 90 days)', () => {
    expect(plausibleBand(100, 90)).toEqual({ low: 50, high: 150 });
    expect(plausibleBand(90, 91)).toEqual({ low: 30, high: 270 });
    const far = { ...BUY, takeProfit: [66_200, 99_000] };
    expect(rules(far)).toEqual(['levels_within_band']);
    expect(rules({ ...far, horizon: { days: 180, label: '6 months' } })).toEqual([]);
    expect(recommendationViolations(far, FACTS)[0]?.path).toBe('/takeProfit/1');
  });

  it('REDUCE needs a position, at most its fraction of equity, on the side against it', () => {
    const reduce: LlmRecommendation = {
      ...hold(),
      action: 'REDUCE',
      size: { fractionOfEquity: 0.1 },
    };
    expect(rules(reduce)).toEqual(['reduce_needs_position']);
    const position = positionFacts(account([LONG]), 'BTC-USDT');
    expect(position).toEqual({ side: 'long', fractionOfEquity: 0.25 });
    expect(rules(reduce, { position })).toEqual([]);
    expect(rules({ ...reduce, size: { fractionOfEquity: 0.3 } }, { position })).toEqual([
      'reduce_within_position',
    ]);
    // Reducing a long sells: a stop (for the rest) belongs above the zone.
    const levels = { ...reduce, entry: { low: 63_400, high: 64_000 }, stopLoss: 62_000 };
    expect(rules(levels, { position })).toEqual(['sell_stop_above_entry']);
    const { size: _z, ...noSize } = reduce;
    expect(rules(noSize, { position })).toEqual(['reduce_needs_size']);
    // Unknown position (the written file): the REDUCE rules are not checked.
    expect(rules(reduce, { position: undefined })).toEqual([]);
    expect(positionFacts(account([]), 'BTC-USDT')).toBeNull();
    expect(positionFacts(undefined, 'BTC-USDT')).toBeNull();
  });

  it('cites only the input reports', () => {
    const citations = [{ reportId: 'rpt_000000000000000000000000', claim: 'x' }] as const;
    expect(rules({ ...BUY, rationale: { ...BUY.rationale, citations: [...citations] } })).toEqual([
      'citations_cite_inputs',
    ]);
  });

  it('never quotes a value of the output in a violation', () => {
    const violations = recommendationViolations(
      { ...BUY, stopLoss: 97_531, takeProfit: [13_579], size: { fractionOfEquity: 0.987 } },
      FACTS,
    );
    expect(violations.length).toBeGreaterThan(2);
    const text = JSON.stringify(violations);
    for (const value of ['97531', '97,531', '13579', '0.987']) expect(text).not.toContain(value);
  });
});

describe('recommendationOutputViolations (the worker’s structured-output check)', () => {
  it('checks the contract first (without quoting model keys), then the rules', () => {
    expect(recommendationOutputViolations(BUY, FACTS)).toEqual([]);
    const extra = { ...BUY, headline: 'h'.repeat(201), ['CANARY key']: 1 };
    const violations = recommendationOutputViolations(extra, FACTS);
    expect(violations).toEqual([
      {
        rule: 'contract',
        path: '/',
        message: "must satisfy 'additionalProperties' of llm_recommendation.schema.json",
      },
      {
        rule: 'contract',
        path: '/headline',
        message: "must satisfy 'maxLength' of llm_recommendation.schema.json",
      },
    ]);
    expect(JSON.stringify(violations)).not.toContain('CANARY');
    expect(recommendationOutputViolations({ ...BUY, stopLoss: 64_000 }, FACTS)).toEqual([
      {
        rule: 'buy_stop_below_entry',
        path: '/stopLoss',
        message: 'BUY: stopLoss must be below entry.low',
      },
    ]);
  });
});

describe('llmRecommendationFileProblem (the descriptor’s artifact check)', () => {
  it('accepts the file example and names the rules of a tampered one', () => {
    expect(LLM_RECOMMENDATION_STEP.artifact.check?.(FILE)).toBeUndefined();
    expect(llmRecommendationFileProblem({ ...FILE, output: { ...BUY, stopLoss: 64_000 } })).toBe(
      'output breaks buy_stop_below_entry',
    );
    const limited = {
      ...FILE.metadata,
      riskLimits: { source: 'default' as const, maxPositionFraction: 0.1 },
    };
    expect(llmRecommendationFileProblem({ ...FILE, metadata: limited })).toBe(
      'output breaks size_within_position_limit',
    );
  });

  it('refuses a schemaVersion off its schemaId and a reportId named twice', () => {
    expect(
      llmRecommendationFileProblem({ ...FILE, metadata: { ...FILE.metadata, schemaVersion: 2 } }),
    ).toMatch(/schemaVersion 2 does not match/);
    const [first] = FILE.metadata.inputs.reports;
    if (first === undefined) throw new Error('fixture');
    const twice = {
      ...FILE.metadata.inputs,
      reports: [first, first] as [typeof first, typeof first],
    };
    expect(
      llmRecommendationFileProblem({ ...FILE, metadata: { ...FILE.metadata, inputs: twice } }),
    ).toBe('metadata.inputs.reports names a reportId twice');
  });

  it('declares the account upstream optional and the reports a list', () => {
    expect(LLM_RECOMMENDATION_STEP.upstream).toEqual({
      ohlcv: { field: 'ohlcvStepId', stepType: 'OHLCV_EXPORT' },
      reports: { field: 'reportStepIds', stepType: 'LLM_REPORT', many: true },
      account: { field: 'accountStepId', stepType: 'ACCOUNT_EXPORT', optional: true },
      news: { field: 'newsStepId', stepType: 'NEWS_EXPORT', optional: true },
    });
  });
});
