import type {
  AccountPosition,
  AccountSnapshot,
  LlmRecommendation,
  LlmReportFile,
  OhlcvExport,
  Timeframe,
} from '@tda/contracts';

/**
 * Fixtures of LLM_RECOMMENDATION tests: the input reports (llm_report_file with the trend and the
 * key levels the offline recommender reads), an account snapshot, a small OHLCV export cut at asOf
 * and a recommendation output that passes the schema and the invariants for them.
 */

export const RECO_RUN_ID = '20260920-000000_BTC-USDT_r4k9pz';
export const RECO_AS_OF = '2026-09-20T00:00:00Z';
export const RECO_LAST_CLOSE = 63_412.5;

export interface ReportFixture {
  runId?: string;
  timeframe: Timeframe;
  stepId?: string;
  direction?: 'bullish' | 'bearish' | 'sideways';
  strength?: 'weak' | 'moderate' | 'strong';
  bias?: 'bullish' | 'bearish' | 'neutral';
  supports?: number[];
  resistances?: number[];
  markdown?: string;
}

export function reportStepIdFor(timeframe: Timeframe): string {
  return `llm_report:${timeframe}:prompt_multi_tf_v1:model_gemini_2_5_flash`;
}

/** An llm_report_file of one timeframe with the given trend reading and levels. */
export function recommendationInputReport(fixture: ReportFixture): LlmReportFile {
  const runId = fixture.runId ?? RECO_RUN_ID;
  const { timeframe } = fixture;
  const base = `gs://tda-artifacts/runs/${runId}/${timeframe}`;
  const direction = fixture.direction ?? 'bullish';
  const level = (price: number) => ({
    price,
    strength: 'major' as const,
    rationale: 'Prior swing.',
  });
  return {
    metadata: {
      schemaVersion: 1,
      runId,
      stepId: fixture.stepId ?? reportStepIdFor(timeframe),
      symbol: 'BTC-USDT',
      timeframe,
      promptId: 'prompt_multi_tf_v1',
      schemaId: 'llm_report_output_v1',
      modelName: 'gemini-2.5-flash',
      provider: 'offline',
      inputs: {
        ohlcvGcsUri: `${base}/ohlcv_export:${timeframe}.json`,
        chartsManifestGcsUri: `${base}/charts:${timeframe}:ctpl_default_v1.json`,
        chartGcsUris: [],
        previousReportGcsUris: [],
      },
      llm: { finishReason: 'STOP', attempts: { total: 1 } },
    },
    output: {
      summary: { markdown: fixture.markdown ?? `## ${timeframe}\n\nTrend ${direction}.` },
      details: {
        trend: { direction, strength: fixture.strength ?? 'moderate', rationale: 'Swings.' },
        keyLevels: {
          support: (fixture.supports ?? [62_400, 61_000]).map(level),
          resistance: (fixture.resistances ?? [66_200, 68_900]).map(level),
        },
        indicators: [{ name: 'RSI(14)', value: 58, signal: 'bullish', comment: 'Above 55.' }],
        risks: ['A close below support.'],
        outlook: {
          bias: fixture.bias ?? (direction === 'sideways' ? 'neutral' : direction),
          horizon: 'next 1-2 weeks',
          baseCase: 'Trend continues.',
          invalidation: 'A close beyond the level.',
        },
        confidence: 0.5,
      },
    },
  };
}

export function accountPosition(overrides: Partial<AccountPosition> = {}): AccountPosition {
  return {
    symbol: 'BTC-USDT',
    side: 'long',
    size: 0.05,
    averageEntry: 60_000,
    markPrice: RECO_LAST_CLOSE,
    marketValue: 3_170.625,
    unrealizedPnl: 170.625,
    fractionOfEquity: 0.15,
    ...overrides,
  };
}

/**
 * A paper account_snapshot (equity 21,137.5 USDT) at asOf; no position unless given. freeCash
 * follows from the equity and the positions (what ACCOUNT_EXPORT's artifact check demands).
 */
export function accountSnapshotFixture(
  overrides: Partial<AccountSnapshot> = {},
  runId = RECO_RUN_ID,
): AccountSnapshot {
  const positions = overrides.positions ?? [];
  const equity = overrides.equity ?? 21_137.5;
  const held = positions.reduce(
    (sum, p) => sum + (p.side === 'long' ? p.marketValue : -p.marketValue),
    0,
  );
  return {
    schemaVersion: 1,
    runId,
    stepId: 'account_export',
    accountId: 'demo',
    source: { provider: 'paper' },
    asOf: RECO_AS_OF,
    quoteCurrency: 'USDT',
    equity,
    freeCash: equity - held,
    positions,
    riskLimits: { maxPositionFraction: 0.2, maxRiskPerTradeFraction: 0.01 },
    ...overrides,
  };
}

/**
 * An ohlcv_export cut at `asOf` whose last candle (4h, opened 4 h before asOf) closes at
 * `lastClose`: 30 candles on a gentle rise.
 */
export function recommendationOhlcv(
  options: { runId?: string; asOf?: string; lastClose?: number; stepId?: string } = {},
): OhlcvExport {
  const asOf = options.asOf ?? RECO_AS_OF;
  const lastClose = options.lastClose ?? RECO_LAST_CLOSE;
  const step = 4 * 3_600_000;
  const end = Date.parse(asOf);
  const candles = Array.from({ length: 30 }, (_, i) => {
    const close = i === 29 ? lastClose : lastClose * (0.97 + i * 0.001);
    const open = close * 0.998;
    return {
      openTime: new Date(end - (30 - i) * step).toISOString().replace('.000Z', 'Z'),
      open,
      high: Math.max(open, close) * 1.002,
      low: Math.min(open, close) * 0.998,
      close,
      volume: 100 + i,
    };
  });
  const [first, ...rest] = candles;
  if (first === undefined) throw new Error('fixture');
  return {
    schemaVersion: 1,
    runId: options.runId ?? RECO_RUN_ID,
    stepId: options.stepId ?? 'ohlcv_export:4h',
    symbol: 'BTC-USDT',
    timeframe: '4h',
    asOf,
    source: { provider: 'bundled', dataset: 'test/synthetic' },
    range: { from: first.openTime, to: asOf },
    candles: [first, ...rest],
    candleCount: candles.length,
    incompleteBucketPolicy: 'dropped',
  };
}

/** A BUY that passes llm_recommendation and the invariants for the fixtures above. */
export function validRecommendationOutput(
  reportIds: readonly string[],
  overrides: Partial<LlmRecommendation> = {},
): LlmRecommendation {
  const [first = 'rpt_000000000000000000000000'] = reportIds;
  return {
    action: 'BUY',
    signal_strength: 0.6,
    headline: 'BUY BTC-USDT on the pullback to 62,400',
    entry: { low: 62_400, high: 63_500 },
    stopLoss: 60_800,
    takeProfit: [66_200, 68_900],
    size: { fractionOfEquity: 0.1 },
    horizon: { days: 10, label: '1-2 weeks' },
    rationale: {
      summary: 'The reports agree on an uptrend; buy the pullback.',
      citations: [{ reportId: first, claim: 'Uptrend above the rising EMA.' }],
    },
    risks: ['A daily close below 61,000.'],
    ...overrides,
  };
}
