import type { Timeframe } from '@tda/contracts';
import { BundledCandleSource, type IncompleteBucketPolicy } from '@tda/market-data';
import { describe, expect, it } from 'vitest';
import { defaultReportSchema } from './default-registry';
import { LlmCallError, type LlmRequest } from './llm-client.port';
import {
  conformToSchema,
  OFFLINE_MODEL_VERSION,
  OfflineAnalystClient,
} from './offline-analyst.client';
import { OFFLINE_ANALYST_LABEL } from './offline-report';
import { OutputSchemaValidatorCache } from './output-schema';
import { runStructuredOutput, type StructuredOutputSuccess } from './structured-output.pipeline';
import { chartsManifestFor, manualClock, ohlcvExportFromSeries } from './testing';
import { TimeBudget } from './time-budget';

const source = new BundledCandleSource();
const jsonSchema = defaultReportSchema().jsonSchema;
const validators = new OutputSchemaValidatorCache();
const schema = {
  schemaId: 'llm_report_output_v1',
  jsonSchema,
  validator: validators.get(jsonSchema),
};

interface ReportOutput {
  summary: { markdown: string };
  details: {
    trend: { direction: string; strength: string };
    keyLevels: { support: { price: number }[]; resistance: { price: number }[] };
    indicators: { name: string; value?: number }[];
    risks: string[];
    outlook: { bias: string; horizon: string };
    confidence: number;
  };
}

async function request(
  symbol: string,
  timeframe: Timeframe,
  limit: number,
  options: {
    policy?: IncompleteBucketPolicy;
    previousReports?: unknown[];
    responseJsonSchema?: Record<string, unknown>;
    asOf?: string;
  } = {},
): Promise<LlmRequest> {
  const series = await source.fetchCandles({
    symbol,
    timeframe,
    limit,
    incompleteBucketPolicy: options.policy ?? 'dropped',
    // The February 2022 picture these tests read (the Binance daily history covers it).
    asOf: Date.parse(options.asOf ?? '2022-03-01T06:00:00Z'),
  });
  const ohlcv = ohlcvExportFromSeries(series);
  return {
    model: 'gemini-2.5-flash',
    systemInstruction: 'system',
    contents: [{ text: 'user' }],
    generationConfig: {
      responseMimeType: 'application/json',
      responseJsonSchema: options.responseJsonSchema ?? jsonSchema,
    },
    deadlineMs: 600_000,
    attempt: 1,
    context: {
      symbol,
      timeframe,
      ohlcv,
      chartsManifest: chartsManifestFor(ohlcv, [
        {
          chartTemplateId: 'ctpl_price_ema_v1',
          kind: 'candlestick',
          description: 'Candles with EMAs.',
        },
        { chartTemplateId: 'ctpl_rsi_v1', kind: 'rsi', description: 'RSI(14).' },
      ]),
      previousReports: options.previousReports ?? [],
    },
  };
}

/** Runs the offline analyst through the real pipeline, as the worker will. */
async function report(
  req: LlmRequest,
): Promise<{ result: StructuredOutputSuccess; output: ReportOutput; lastClose: number }> {
  const clock = manualClock();
  const { attempt: _a, deadlineMs: _d, ...template } = req;
  const result = await runStructuredOutput({
    client: new OfflineAnalystClient(),
    request: template,
    schema,
    budget: new TimeBudget({ startedAt: clock.now().getTime(), clock: clock.now }),
    sleep: clock.sleep,
  });
  if (!result.ok) throw new Error(`offline report failed: ${result.error.message}`);
  const candles = (
    req.context?.ohlcv as { candles: { close: number; complete?: boolean }[] }
  ).candles.filter((c) => c.complete !== false);
  return {
    result,
    output: result.output as unknown as ReportOutput,
    lastClose: candles[candles.length - 1]?.close ?? Number.NaN,
  };
}

function fileOf(timeframe: Timeframe, output: unknown): unknown {
  return { metadata: { timeframe, schemaId: 'llm_report_output_v1' }, output };
}

describe('OfflineAnalystClient on real candles', () => {
  it.each([
    ['BTC-USDT', '1M', 60],
    ['BTC-USDT', '1w', 104],
    ['ETH-USDT', '1d', 180],
  ] as const)(
    '%s %s: a schema-valid, labelled report with levels on the right side of the close',
    async (symbol, timeframe, limit) => {
      const { result, output, lastClose } = await report(await request(symbol, timeframe, limit));
      expect(result).toMatchObject({
        attempts: 1,
        calls: 1,
        finishReason: 'STOP',
        modelVersion: OFFLINE_MODEL_VERSION,
        repair: { attempted: false },
      });
      // No model ran: no token counts rather than zeros that would read as a measured call.
      expect(result.usageMetadata).toBeUndefined();
      expect(result.requestId).toMatch(/^offline-[0-9a-f]{24}$/);
      const md = output.summary.markdown;
      expect(md).toContain(OFFLINE_ANALYST_LABEL);
      expect(md.startsWith(`## ${symbol} `)).toBe(true);
      expect(md).toContain(
        'Charts in this run: ctpl_price_ema_v1 (candlestick), ctpl_rsi_v1 (rsi).',
      );
      expect(md).not.toContain('```');
      for (const level of output.details.keyLevels.support)
        expect(level.price).toBeLessThan(lastClose);
      for (const level of output.details.keyLevels.resistance)
        expect(level.price).toBeGreaterThan(lastClose);
      const supports = output.details.keyLevels.support.map((l) => l.price);
      expect(supports).toEqual([...supports].sort((a, b) => b - a));
      // Exactly the studies of the manifest's charts: ctpl_price_ema_v1 (EMA 20/50, no bands)
      // and ctpl_rsi_v1 (RSI 14); no MACD chart, so no MACD. ATR(14) sizes the levels.
      expect(output.details.indicators.map((i) => i.name)).toEqual([
        'EMA(20)',
        'EMA(50)',
        'RSI(14)',
        'ATR(14)',
      ]);
      expect(output.details.confidence).toBeGreaterThan(0);
      expect(output.details.confidence).toBeLessThanOrEqual(0.6);
    },
  );

  it('reads the February 2022 weekly BTC chart as bearish below its EMAs', async () => {
    const { output } = await report(await request('BTC-USDT', '1w', 104));
    expect(output.details.trend.direction).toBe('bearish');
    expect(output.details.outlook).toMatchObject({ bias: 'bearish', horizon: 'next 2-6 weeks' });
    expect(output.summary.markdown).toContain('closed at **37,699**');
  });

  it('is deterministic: the same request gives the same bytes, also for the repair attempt', async () => {
    const client = new OfflineAnalystClient();
    const req = await request('BTC-USDT', '1M', 60);
    const a = await client.generate(req);
    const b = await client.generate({
      ...req,
      attempt: 2,
      contents: [...req.contents, { text: 'repair' }],
    });
    expect(b).toEqual(a);
    expect(a.candidates[0]?.parts[0]?.text).toBe(a.text);
  });

  it('places the weekly report in the context of the monthly report of the same run', async () => {
    const month = await report(await request('BTC-USDT', '1M', 60));
    const week = await report(
      await request('BTC-USDT', '1w', 104, { previousReports: [fileOf('1M', month.output)] }),
    );
    const md = week.output.summary.markdown;
    expect(md).toContain(
      '**Higher timeframe.** The monthly (1M) report of this run reads the trend as',
    );
    expect(month.output.details.trend.direction).toBe('bullish');
    expect(md).toContain('contradicts it');
    expect(week.output.details.risks).toContain(
      'This weekly view runs against the 1M report of the same run.',
    );
    const alone = await report(await request('BTC-USDT', '1w', 104));
    expect(alone.output.summary.markdown).not.toContain('Higher timeframe');
    expect(week.output.details.confidence).toBeLessThan(alone.output.details.confidence);
  });

  it('mentions a still-forming last candle and keeps it out of the indicators', async () => {
    // One whole day of March 2022 has ended: the March candle is forming.
    const marked = await request('BTC-USDT', '1M', 61, {
      policy: 'marked',
      asOf: '2022-03-02T00:00:00Z',
    });
    const candles = (marked.context?.ohlcv as { candles: { complete?: boolean }[] }).candles;
    expect(candles[candles.length - 1]?.complete).toBe(false);
    const { output } = await report(marked);
    expect(output.summary.markdown).toContain('is still forming');
    expect(output.details.risks[0]).toMatch(
      /^The last monthly candle \(opened 2022-03\) is still forming/,
    );
    const dropped = await report(
      await request('BTC-USDT', '1M', 60, { asOf: '2022-03-02T00:00:00Z' }),
    );
    expect(output.details.indicators).toEqual(dropped.output.details.indicators);
  });

  it('handles a short history (ETH-USDT 1M): weak trend from price change, still schema-valid', async () => {
    // ETH-USDT trades on Binance from 2017-08: ten months of history by June 2018.
    const { output } = await report(
      await request('ETH-USDT', '1M', 60, { asOf: '2018-06-01T00:00:00Z' }),
    );
    expect(output.details.trend.strength).toBe('weak');
    expect(output.details.indicators[0]?.name).toMatch(/^Change over \d+ candles$/);
    expect(output.details.risks.some((r) => r.startsWith('Only '))).toBe(true);
  });

  it('honours a narrower response schema where that is mechanical (extra fields dropped, arrays trimmed)', async () => {
    const narrow = structuredClone(jsonSchema) as {
      properties: {
        details: Record<string, unknown> & { properties: Record<string, Record<string, unknown>> };
      };
    };
    narrow.properties.details['additionalProperties'] = false;
    delete narrow.properties.details.properties['confidence'];
    const risks = narrow.properties.details.properties['risks'];
    if (risks !== undefined) risks['maxItems'] = 1;
    const client = new OfflineAnalystClient();
    const response = await client.generate(
      await request('BTC-USDT', '1w', 104, { responseJsonSchema: narrow }),
    );
    const output = JSON.parse(response.text ?? '') as ReportOutput;
    expect(output.details.confidence).toBeUndefined();
    expect(output.details.risks).toHaveLength(1);
    expect(new OutputSchemaValidatorCache().get(narrow).validate(output).ok).toBe(true);
  });

  it('cannot satisfy a different schema: the pipeline says so after the one repair', async () => {
    const other = {
      type: 'object',
      required: ['summary', 'details', 'verdict'],
      properties: {
        summary: { type: 'object' },
        details: { type: 'object' },
        verdict: { type: 'string' },
      },
    };
    const clock = manualClock();
    const {
      attempt: _a,
      deadlineMs: _d,
      ...template
    } = await request('BTC-USDT', '1w', 104, { responseJsonSchema: other });
    const result = await runStructuredOutput({
      client: new OfflineAnalystClient(),
      request: template,
      schema: {
        schemaId: 'llm_report_output_v2',
        jsonSchema: other,
        validator: validators.get(other),
      },
      budget: new TimeBudget({ startedAt: clock.now().getTime(), clock: clock.now }),
      sleep: clock.sleep,
    });
    expect(result).toMatchObject({
      ok: false,
      attempts: 2,
      error: { code: 'INVALID_STRUCTURED_OUTPUT' },
    });
  });

  it('refuses a request without a usable ohlcv_export context (non-retryable)', async () => {
    const req = await request('BTC-USDT', '1w', 104);
    const client = new OfflineAnalystClient();
    for (const context of [
      undefined,
      { symbol: 'BTC-USDT' },
      { symbol: 'BTC-USDT', ohlcv: { candles: [] } },
    ]) {
      const error = await client.generate({ ...req, context }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LlmCallError);
      expect(error).toMatchObject({ code: 'LLM_PROFILE_INVALID', retryable: false });
    }
  });
});

describe('conformToSchema', () => {
  it('drops undeclared keys only under additionalProperties false and trims to maxItems', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: {
        a: { type: 'array', maxItems: 2, items: { type: 'object', properties: { x: {} } } },
        open: { type: 'object', properties: {} },
      },
    };
    expect(
      conformToSchema({ a: [{ x: 1, y: 2 }, {}, {}], open: { z: 1 }, gone: true }, schema),
    ).toEqual({
      a: [{ x: 1, y: 2 }, {}],
      open: { z: 1 },
    });
    expect(conformToSchema('text', schema)).toBe('text');
    expect(conformToSchema({ k: 1 }, undefined)).toEqual({ k: 1 });
  });
});
