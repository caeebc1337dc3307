import { RUN_ID_PATTERN, STEP_ID_MAX_LENGTH } from '@tda/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors';
import {
  buildStepId,
  generateRunId,
  isStorageSafeStepId,
  isValidRunId,
  modelVariant,
  parseRunId,
  parseStepId,
  randomSuffix,
  stepIdTimeframe,
  symbolSlug,
} from './ids';
import { seededRandom } from './testing/run-fixtures';

describe('runId', () => {
  const createdAt = new Date('2025-03-07T04:05:06.789Z');

  it.each([
    ['BTC/USDT', 'BTC-USDT'],
    ['btc-usdt', 'BTC-USDT'],
    ['BTCUSDT', 'BTCUSDT'],
    ['eth/usd', 'ETH-USD'],
  ])('slugs symbol %s as %s', (symbol, slug) => {
    expect(symbolSlug(symbol)).toBe(slug);
  });

  it('rejects symbols that are not trading symbols', () => {
    for (const bad of ['', 'B', 'BTC/USDT/X', 'BTC USDT', 'BTC.USDT', 'BTC_USDT']) {
      expect(() => symbolSlug(bad)).toThrow(InvalidRequestError);
    }
  });

  it('formats YYYYMMDD-HHmmss_<slug>_<suffix> in UTC with a 5-character default suffix', () => {
    const runId = generateRunId({ createdAt, symbol: 'BTC/USDT', random: () => 0 });
    expect(runId).toBe('20250307-040506_BTC-USDT_aaaaa');
    expect(RUN_ID_PATTERN.test(runId)).toBe(true);
  });

  it('uses UTC even for times that are a different day in local zones', () => {
    const late = new Date('2024-12-31T23:59:59.000Z');
    expect(generateRunId({ createdAt: late, symbol: 'ETHUSDT', random: () => 0.999 })).toBe(
      '20241231-235959_ETHUSDT_99999',
    );
  });

  it('honours suffix lengths 3..6 and rejects others', () => {
    for (const length of [3, 4, 5, 6]) {
      const runId = generateRunId({
        createdAt,
        symbol: 'BTCUSDT',
        random: seededRandom(length),
        suffixLength: length,
      });
      expect(parseRunId(runId)?.suffix).toHaveLength(length);
    }
    for (const length of [0, 2, 7, 4.5]) {
      expect(() => randomSuffix(() => 0.5, length)).toThrow(InvalidRequestError);
    }
  });

  it('stays valid even when the random source misbehaves (1, negative)', () => {
    expect(randomSuffix(() => 1, 3)).toBe('999');
    expect(randomSuffix(() => -3, 3)).toBe('aaa');
  });

  it('property: every generated runId matches RUN_ID_PATTERN and parses back', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2099-12-31T23:59:59Z'),
          noInvalidDate: true,
        }),
        fc.constantFrom('BTC/USDT', 'btc-usdt', 'BTCUSDT', 'ETH-USD', 'sol/usdc'),
        fc.integer(),
        fc.integer({ min: 3, max: 6 }),
        (date, symbol, seed, length) => {
          const runId = generateRunId({
            createdAt: date,
            symbol,
            random: seededRandom(seed),
            suffixLength: length,
          });
          expect(isValidRunId(runId)).toBe(true);
          const parsed = parseRunId(runId);
          expect(parsed?.symbolSlug).toBe(symbolSlug(symbol));
          expect(parsed?.createdAt).toBe(`${date.toISOString().slice(0, 19)}Z`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('validates runIds against the contract pattern', () => {
    expect(isValidRunId('20250307-040506_BTC-USDT_abc12')).toBe(true);
    expect(isValidRunId('20250307-040506_BTC/USDT_abc12')).toBe(false);
    expect(isValidRunId('20250307-040506_BTC-USDT_ab')).toBe(false);
    expect(isValidRunId('20250307-040506_BTC-USDT_ABCDE')).toBe(false);
    expect(isValidRunId(42)).toBe(false);
    expect(parseRunId('nope')).toBeUndefined();
  });
});

describe('stepId', () => {
  it('builds the seed 001 examples', () => {
    expect(buildStepId({ stepType: 'OHLCV_EXPORT', timeframe: '1M' })).toBe('ohlcv_export:1M');
    expect(
      buildStepId({ stepType: 'CHART_EXPORT', timeframe: '1M', variant: ['ctpl_default_v1'] }),
    ).toBe('charts:1M:ctpl_default_v1');
    expect(
      buildStepId({
        stepType: 'LLM_REPORT',
        timeframe: '1M',
        variant: ['prompt_month_v1', 'model_gemini_2_5_flash'],
      }),
    ).toBe('llm_report:1M:prompt_month_v1:model_gemini_2_5_flash');
    expect(
      buildStepId({
        stepType: 'LLM_RECOMMENDATION',
        variant: ['prompt_reco_v1', 'model_gpt_4o_mini'],
      }),
    ).toBe('llm_reco:prompt_reco_v1:model_gpt_4o_mini');
    expect(buildStepId({ stepType: 'ACCOUNT_EXPORT' })).toBe('account_export');
  });

  it('refuses unsafe variant segments and variants that would read as a timeframe', () => {
    expect(() =>
      buildStepId({ stepType: 'CHART_EXPORT', timeframe: '1d', variant: ['a.b'] }),
    ).toThrow(InvalidRequestError);
    expect(() =>
      buildStepId({ stepType: 'CHART_EXPORT', timeframe: '1d', variant: ['a:b'] }),
    ).toThrow(InvalidRequestError);
    expect(() => buildStepId({ stepType: 'NEWS_EXPORT', variant: ['1d'] })).toThrow(/timeframe/);
    expect(() =>
      buildStepId({ stepType: 'NEWS_EXPORT', variant: ['x'.repeat(STEP_ID_MAX_LENGTH)] }),
    ).toThrow(/storage-safe/);
  });

  it('accepts storage-safe ids and rejects ., /, *, ~, [, ], spaces and over-long ids', () => {
    for (const ok of ['ohlcv_export:1M', 'charts:1w:ctpl_default_v1', 'a', 'A-b_c:d']) {
      expect(isStorageSafeStepId(ok)).toBe(true);
    }
    for (const bad of [
      'a.b',
      'a/b',
      'a*b',
      'a~b',
      'a[b',
      'a]b',
      'a b',
      '',
      ':a',
      '_a',
      'x'.repeat(STEP_ID_MAX_LENGTH + 1),
      7,
    ]) {
      expect(isStorageSafeStepId(bad)).toBe(false);
    }
    expect(isStorageSafeStepId('x'.repeat(STEP_ID_MAX_LENGTH))).toBe(true);
  });

  it('extracts the timeframe segment', () => {
    expect(stepIdTimeframe('ohlcv_export:1M')).toBe('1M');
    expect(stepIdTimeframe('llm_report:1w:prompt_week_v1:model_x')).toBe('1w');
    expect(stepIdTimeframe('indicators_on_demand:1d:req_01J')).toBe('1d');
    expect(stepIdTimeframe('llm_reco:prompt_reco_v1:model_x')).toBeUndefined();
    expect(stepIdTimeframe('account_export')).toBeUndefined();
    // '1m' (minute) is not a supported timeframe; case matters (M = month)
    expect(stepIdTimeframe('ohlcv_export:1m')).toBeUndefined();
    expect(parseStepId('charts:4h:ctpl_default_v1')).toEqual({
      prefix: 'charts',
      timeframe: '4h',
      variant: ['ctpl_default_v1'],
    });
  });

  it('slugs model names into a model variant', () => {
    expect(modelVariant('gemini-2.5-flash')).toBe('model_gemini_2_5_flash');
    expect(modelVariant('models/Gemini 2.5 Pro')).toBe('model_models_gemini_2_5_pro');
    expect(modelVariant('model_gpt_4o_mini')).toBe('model_gpt_4o_mini');
    expect(() => modelVariant('---')).toThrow(InvalidRequestError);
  });
});
