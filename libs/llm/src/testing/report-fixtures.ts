import { deflateSync } from 'node:zlib';
import type {
  ChartsManifest,
  LlmPrompt,
  OhlcvCandle,
  OhlcvExport,
  Timeframe,
} from '@tda/contracts';
import type { CandleSeries } from '@tda/market-data';
import { formatTimestamp, nextBucketStart } from '@tda/market-data';

/** An ohlcv_export artifact built from a candle series (what OHLCV_EXPORT writes). */
export function ohlcvExportFromSeries(
  series: CandleSeries,
  ids: { runId?: string; stepId?: string; symbol?: string } = {},
): OhlcvExport {
  const candles: OhlcvCandle[] = series.candles.map((c) => ({
    openTime: formatTimestamp(c.openTime),
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
    volume: c.volume,
    ...(c.complete === false ? { complete: false } : {}),
  }));
  const first = series.candles[0];
  const last = series.candles[series.candles.length - 1];
  const [firstCandle, ...rest] = candles;
  if (first === undefined || last === undefined || firstCandle === undefined) {
    throw new Error('empty candle series');
  }
  return {
    schemaVersion: 1,
    runId: ids.runId ?? '20260301-120000_BTC-USDT_abc123',
    stepId: ids.stepId ?? `ohlcv_export:${series.timeframe}`,
    symbol: ids.symbol ?? series.symbol,
    timeframe: series.timeframe,
    // Cut where the data ends, as the exporter does for a run without scope.asOf.
    asOf: formatTimestamp(nextBucketStart(last.openTime, series.timeframe)),
    source: series.source,
    range: {
      from: formatTimestamp(first.openTime),
      to: formatTimestamp(nextBucketStart(last.openTime, series.timeframe)),
    },
    candles: [firstCandle, ...rest],
    candleCount: candles.length,
    incompleteBucketPolicy: series.incompleteBucketPolicy,
  };
}

/** A small synthetic ohlcv_export: `count` candles on a gentle trend with a wobble. */
export function syntheticOhlcvExport(
  options: { count?: number; timeframe?: Timeframe; drift?: number; start?: number } = {},
): OhlcvExport {
  const count = options.count ?? 120;
  const timeframe = options.timeframe ?? '1d';
  const drift = options.drift ?? 0.004;
  let price = options.start ?? 100;
  let time = Date.UTC(2025, 0, 1);
  const candles: CandleSeries['candles'] = [];
  for (let i = 0; i < count; i += 1) {
    const open = price;
    const close = open * (1 + drift + 0.03 * Math.sin(i / 3));
    const high = Math.max(open, close) * 1.01;
    const low = Math.min(open, close) * 0.99;
    candles.push({ openTime: time, open, high, low, close, volume: 1000 + i });
    price = close;
    time = nextBucketStart(time, timeframe);
  }
  return ohlcvExportFromSeries({
    symbol: 'BTC-USDT',
    timeframe,
    candles,
    source: { provider: 'bundled', dataset: 'test/synthetic' },
    incompleteBucketPolicy: 'dropped',
  });
}

/** A valid 1x1 PNG (so prompt assembly's signature check passes), padded to `bytes` if given. */
export function tinyPng(bytes?: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (data: Buffer): number => {
    let c = 0xffffffff;
    for (const byte of data) c = (crcTable[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.writeUInt8(8, 8);
  header.writeUInt8(0, 9);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from([0, 0]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  if (bytes === undefined || bytes <= png.length) return png;
  return Buffer.concat([png, Buffer.alloc(bytes - png.length)]);
}

/** A charts manifest describing the given charts of one step. */
export function chartsManifestFor(
  ohlcv: OhlcvExport,
  charts: readonly { chartTemplateId: string; kind: string; description: string; bytes?: number }[],
): ChartsManifest {
  const [first] = charts;
  if (first === undefined) throw new Error('a charts manifest requests at least one chart');
  const stepId = `charts:${ohlcv.timeframe}:ctpl_default_v1`;
  const base = `gs://tda-artifacts/runs/${ohlcv.runId}/${ohlcv.timeframe}/${stepId}`;
  return {
    schemaVersion: 1,
    runId: ohlcv.runId,
    stepId,
    symbol: ohlcv.symbol,
    timeframe: ohlcv.timeframe,
    minImages: 1,
    requested: [first, ...charts.slice(1)].map((c) => ({
      chartTemplateId: c.chartTemplateId,
      kind: c.kind,
    })) as ChartsManifest['requested'],
    items: charts.map((c) => ({
      chartTemplateId: c.chartTemplateId,
      kind: c.kind,
      gcs_uri: `${base}.${c.chartTemplateId}.png`,
      contentType: 'image/png',
      width: 1280,
      height: 720,
      bytes: c.bytes ?? 1000,
      sha256: '0'.repeat(64),
      description: c.description,
    })),
    failures: [],
    status: 'SUCCEEDED',
  };
}

/** A minimal prompt document for assembly tests. */
export function testPrompt(overrides: Partial<LlmPrompt> = {}): LlmPrompt {
  return {
    promptId: 'prompt_test_v1',
    systemInstruction: 'You are a technical analyst. Return only JSON.',
    userPrompt: 'Write the report for the symbol in UserInput.',
    ...overrides,
  };
}

/** An output that satisfies llm_report_output_v1. */
export function validReportOutput(markdown = '## Report\n\nAll good.'): Record<string, unknown> {
  return {
    summary: { markdown },
    details: {
      trend: { direction: 'bullish', strength: 'moderate', rationale: 'Higher highs.' },
      keyLevels: {
        support: [{ price: 100, strength: 'major', rationale: 'Prior low.' }],
        resistance: [{ price: 120, rationale: 'Prior high.' }],
      },
      indicators: [{ name: 'RSI(14)', value: 55, signal: 'neutral', comment: 'Midline.' }],
      risks: ['A close below 100.'],
      outlook: {
        bias: 'bullish',
        horizon: 'next 1-2 weeks',
        baseCase: 'Test 120.',
        invalidation: 'Close below 100.',
      },
      confidence: 0.5,
    },
  };
}

/** A settable clock for TimeBudget tests; `sleep` advances it instead of waiting. */
export function manualClock(startMs = Date.UTC(2026, 2, 1, 12, 0, 0)): {
  now: () => Date;
  advance: (ms: number) => void;
  sleep: (ms: number) => Promise<void>;
  sleeps: number[];
} {
  let current = startMs;
  const sleeps: number[] = [];
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
      current += ms;
    },
    sleeps,
  };
}
