import { describe, expect, it } from 'vitest';
import {
  ERROR_CODE_INFO,
  ERROR_CODES,
  type ErrorCode,
  FLOW_KEY_PATTERN,
  LLM_PROVIDERS,
  LLM_REPORT_SCHEMA_ID_PATTERN,
  LLM_SCHEMA_KINDS,
  PROMPT_ID_PATTERN,
  RUN_ID_PATTERN,
  STEP_ID_MAX_LENGTH,
  STEP_ID_PATTERN,
} from './index';
import { readSchema } from './testing/contract-files';

describe('ERROR_CODE_INFO', () => {
  it('covers every error code and nothing else', () => {
    expect(Object.keys(ERROR_CODE_INFO).sort()).toEqual([...ERROR_CODES].sort());
  });

  it.each([...ERROR_CODES])('%s has a boolean retryable and an HTTP error status', (code) => {
    const info: { retryable: boolean; httpStatus: number } = ERROR_CODE_INFO[code];
    expect(typeof info.retryable).toBe('boolean');
    expect(info.httpStatus).toBeGreaterThanOrEqual(400);
    expect(info.httpStatus).toBeLessThan(600);
  });

  it('maps client mistakes to 4xx and marks only transient failures retryable', () => {
    const client: ErrorCode[] = ['INVALID_REQUEST', 'UNAUTHENTICATED', 'NOT_FOUND', 'CONFLICT'];
    for (const code of client) expect(ERROR_CODE_INFO[code].httpStatus).toBeLessThan(500);
    const transient: ErrorCode[] = [
      'LLM_TIMEOUT',
      'LLM_UNAVAILABLE',
      'GCS_WRITE_FAILED',
      'QUOTA_EXCEEDED',
    ];
    for (const code of transient) expect(ERROR_CODE_INFO[code].retryable).toBe(true);
    const final: ErrorCode[] = [
      'FLOW_RUN_INVALID',
      'INVALID_STRUCTURED_OUTPUT',
      'RETRIES_EXHAUSTED',
    ];
    for (const code of final) expect(ERROR_CODE_INFO[code].retryable).toBe(false);
  });

  it('is the x-tda-codes table of error.schema.json', () => {
    expect(ERROR_CODE_INFO).toEqual(readSchema('error')['x-tda-codes']);
  });
});

describe('id patterns', () => {
  it.each([
    'ohlcv_export:1M',
    'charts:1M:ctpl_default_v1',
    'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash',
    'account_export',
    'indicators_on_demand:1d:req_01J9ZK',
  ])('STEP_ID_PATTERN accepts %s', (id) => {
    expect(id).toMatch(STEP_ID_PATTERN);
  });

  it.each(['ohlcv_export.1M', 'charts/1M', 'a*b', 'a~b', 'a[0]', 'a b', ':leading', ''])(
    'STEP_ID_PATTERN rejects %j',
    (id) => {
      expect(id).not.toMatch(STEP_ID_PATTERN);
    },
  );

  it('bounds step ids', () => {
    expect(STEP_ID_MAX_LENGTH).toBe(200);
  });

  it('RUN_ID_PATTERN follows seed 001 (YYYYMMDD-HHmmss_<symbolSlug>_<suffix>)', () => {
    expect('20220301-060000_BTC-USD_k7m2qx').toMatch(RUN_ID_PATTERN);
    expect('20260920-120000_BTCUSDT_abc').toMatch(RUN_ID_PATTERN);
    expect('20220301-060000_BTC-USD_ab').not.toMatch(RUN_ID_PATTERN);
    expect('20220301-060000_BTC/USD_abc').not.toMatch(RUN_ID_PATTERN);
  });

  it('versioned ids: flowKey, promptId and the llm_report_output_v<N> convention', () => {
    expect('scheduled_month_week_report_v1').toMatch(FLOW_KEY_PATTERN);
    expect('prompt_month_v1').toMatch(PROMPT_ID_PATTERN);
    expect('prompt_month').not.toMatch(PROMPT_ID_PATTERN);
    expect('llm_report_output_v12').toMatch(LLM_REPORT_SCHEMA_ID_PATTERN);
    expect('llm_report_output_v0').not.toMatch(LLM_REPORT_SCHEMA_ID_PATTERN);
    expect('llm_aggregate_report_output_v1').toMatch(LLM_REPORT_SCHEMA_ID_PATTERN);
    expect('llm_aggregate_output_v1').not.toMatch(LLM_REPORT_SCHEMA_ID_PATTERN);
    expect('llm_recommendation_output_v1').not.toMatch(LLM_REPORT_SCHEMA_ID_PATTERN);
  });

  it('lists the LLM providers and schema kinds', () => {
    expect(LLM_PROVIDERS).toEqual(['gemini', 'vertex', 'offline']);
    expect(LLM_SCHEMA_KINDS).toEqual(['LLM_REPORT_OUTPUT', 'LLM_RECOMMENDATION_OUTPUT']);
  });
});
