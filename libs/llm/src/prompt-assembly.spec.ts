import { describe, expect, it } from 'vitest';
import { ContextInputError, ContextLimitError } from './llm.errors';
import {
  assemblePrompt,
  MAX_CHART_IMAGE_BYTES,
  MAX_CONTEXT_BYTES_PER_JSON_ARTIFACT,
  type PromptAssemblyInput,
} from './prompt-assembly';
import { chartsManifestFor, syntheticOhlcvExport, testPrompt, tinyPng } from './testing';

const RUN = '20260301-120000_BTC-USDT_abc123';
const BASE = `gs://tda-artifacts/runs/${RUN}`;

function input(overrides: Partial<PromptAssemblyInput['context']> = {}): PromptAssemblyInput {
  const ohlcv = syntheticOhlcvExport({ count: 30, timeframe: '1w' });
  const manifest = chartsManifestFor(ohlcv, [
    {
      chartTemplateId: 'ctpl_price_ema_v1',
      kind: 'candlestick',
      description: 'Weekly candles\nwith EMA 9 and EMA 21.',
    },
    { chartTemplateId: 'ctpl_rsi_v1', kind: 'rsi', description: 'Weekly RSI(14) at 56.' },
  ]);
  return {
    prompt: testPrompt(),
    identity: {
      runId: RUN,
      stepId: 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash',
      symbol: 'BTC-USDT',
      timeframe: '1w',
    },
    context: {
      ohlcv: { uri: `${BASE}/1w/ohlcv_export:1w.json`, json: JSON.stringify(ohlcv) },
      chartsManifest: {
        uri: `${BASE}/1w/charts:1w:ctpl_default_v1.json`,
        json: Buffer.from(JSON.stringify(manifest)),
      },
      charts: manifest.items.map((item, i) => ({
        uri: item.gcs_uri,
        png: tinyPng(100 + i),
        description: item.description,
        chartTemplateId: item.chartTemplateId,
      })),
      previousReports: [
        {
          stepId: 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash',
          uri: `${BASE}/1M/llm_report:1M.json`,
          json: '{"output":{"summary":{"markdown":"m"}}}',
        },
      ],
      ...overrides,
    },
  };
}

describe('assemblePrompt', () => {
  it('builds the base prompt + UserInput, one text part per JSON artifact and one inlineData part per chart', () => {
    const source = input();
    const result = assemblePrompt(source);
    expect(result.systemInstruction).toBe(source.prompt.systemInstruction);
    expect(result.contents).toHaveLength(1 + 3 + 2);
    const [first, ohlcvPart, manifestPart, reportPart, img1, img2] = result.contents;
    const head = first !== undefined && 'text' in first ? first.text : '';
    expect(head.startsWith(`${source.prompt.userPrompt}\n\n## UserInput\n`)).toBe(true);
    expect(head).toContain('- Symbol: BTC-USDT');
    expect(head).toContain('- Timeframe: 1w (weekly)');
    expect(head).toContain(`- Run: ${RUN}`);
    expect(head).toContain('- Step: llm_report:1w:prompt_week_v1:model_gemini_2_5_flash');
    expect(head).toContain('1. OHLCV export: BTC-USDT 1w candles (JSON');
    expect(head).toContain(
      '3. Earlier report of this run (step llm_report:1M:prompt_month_v1:model_gemini_2_5_flash)',
    );
    // descriptions copied from the manifest, one line each
    expect(head).toContain('   Description: Weekly candles with EMA 9 and EMA 21.');
    expect(head).toContain('5. Chart image ctpl_rsi_v1 (PNG, 101 bytes)');
    // the JSON artifacts verbatim, after a one-line label
    const ohlcvText = ohlcvPart !== undefined && 'text' in ohlcvPart ? ohlcvPart.text : '';
    expect(ohlcvText.split('\n').slice(1).join('\n')).toBe(source.context.ohlcv.json);
    expect(
      manifestPart &&
        'text' in manifestPart &&
        manifestPart.text.startsWith('Input 2: Charts manifest'),
    ).toBe(true);
    expect(
      reportPart &&
        'text' in reportPart &&
        reportPart.text.endsWith('{"output":{"summary":{"markdown":"m"}}}'),
    ).toBe(true);
    expect(img1).toEqual({
      inlineData: { mimeType: 'image/png', data: tinyPng(100).toString('base64') },
    });
    expect(img2).toEqual({
      inlineData: { mimeType: 'image/png', data: tinyPng(101).toString('base64') },
    });
  });

  it('returns the parsed artifacts as the structured context and sizes as stats', () => {
    const source = input();
    const result = assemblePrompt(source);
    expect(result.context.symbol).toBe('BTC-USDT');
    expect(result.context.timeframe).toBe('1w');
    expect(result.context.ohlcv).toEqual(JSON.parse(String(source.context.ohlcv.json)));
    expect(result.context.previousReports).toEqual([{ output: { summary: { markdown: 'm' } } }]);
    expect(result.stats.imageBytes).toEqual([100, 101]);
    expect(result.stats.jsonBytes[0]).toBe(Buffer.byteLength(String(source.context.ohlcv.json)));
  });

  it('is deterministic', () => {
    expect(assemblePrompt(input())).toEqual(assemblePrompt(input()));
  });

  it('says so when there are no charts', () => {
    const result = assemblePrompt(input({ charts: [], previousReports: [] }));
    expect(result.contents).toHaveLength(3);
    const head = result.contents[0];
    expect(head && 'text' in head && head.text.includes('No chart images are available')).toBe(
      true,
    );
  });

  it('accepts a JSON artifact of exactly 64 KB and rejects one byte more, without its content', () => {
    const exact = `"${'x'.repeat(MAX_CONTEXT_BYTES_PER_JSON_ARTIFACT - 2)}"`;
    expect(() =>
      assemblePrompt(
        input({ previousReports: [{ stepId: 's', uri: `${BASE}/r.json`, json: exact }] }),
      ),
    ).not.toThrow();
    const over = `"SECRET${'x'.repeat(MAX_CONTEXT_BYTES_PER_JSON_ARTIFACT - 7)}"`;
    let error: unknown;
    try {
      assemblePrompt(
        input({ previousReports: [{ stepId: 's', uri: `${BASE}/r.json`, json: over }] }),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ContextLimitError);
    if (!(error instanceof ContextLimitError)) return;
    expect(error.code).toBe('INVALID_STEP_INPUTS');
    expect(error.details).toEqual({
      artifact: 'previousReport',
      uri: `${BASE}/r.json`,
      bytes: 65_537,
      limitBytes: 65_536,
    });
    expect(JSON.stringify({ m: error.message, d: error.details })).not.toContain('SECRET');
  });

  it('counts UTF-8 bytes, not characters', () => {
    const json = `"${'é'.repeat(MAX_CONTEXT_BYTES_PER_JSON_ARTIFACT / 2)}"`; // 2 bytes each
    expect(() => assemblePrompt(input({ ohlcv: { uri: `${BASE}/o.json`, json } }))).toThrow(
      ContextLimitError,
    );
  });

  it('rejects a chart image over 256 KB', () => {
    const big = tinyPng(MAX_CHART_IMAGE_BYTES + 1);
    expect(() =>
      assemblePrompt(input({ charts: [{ uri: `${BASE}/big.png`, png: big, description: 'd' }] })),
    ).toThrow(
      expect.objectContaining({
        details: {
          artifact: 'chart',
          uri: `${BASE}/big.png`,
          bytes: MAX_CHART_IMAGE_BYTES + 1,
          limitBytes: MAX_CHART_IMAGE_BYTES,
        },
      }),
    );
    expect(() =>
      assemblePrompt(
        input({
          charts: [
            { uri: `${BASE}/ok.png`, png: tinyPng(MAX_CHART_IMAGE_BYTES), description: 'd' },
          ],
        }),
      ),
    ).not.toThrow();
  });

  it('honours custom limits', () => {
    expect(() =>
      assemblePrompt({ ...input(), limits: { maxContextBytesPerJsonArtifact: 10 } }),
    ).toThrow(ContextLimitError);
  });

  it('rejects an artifact that is not JSON and an image that is not a PNG, naming only the URI and size', () => {
    let error: unknown;
    try {
      assemblePrompt(input({ chartsManifest: { uri: `${BASE}/m.json`, json: 'SECRET not json' } }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ContextInputError);
    expect(error).not.toBeInstanceOf(ContextLimitError);
    expect(
      JSON.stringify(error instanceof ContextInputError ? [error.message, error.details] : null),
    ).not.toContain('SECRET');
    expect(() =>
      assemblePrompt(
        input({ charts: [{ uri: `${BASE}/x.png`, png: Buffer.from('GIF89a'), description: 'd' }] }),
      ),
    ).toThrow(/is not a PNG image/);
  });
});
