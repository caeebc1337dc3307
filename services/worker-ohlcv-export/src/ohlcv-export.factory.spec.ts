import { InMemoryArtifactStore } from '@tda/artifacts';
import { loadConfig, type EnvSource } from '@tda/config';
import { makeRun } from '@tda/flow-engine/testing';
import { OHLCV_EXPORT_STEP } from '@tda/step-types';
import { requireHandlerContext } from '@tda/worker-kit/testing';
import { describe, expect, it } from 'vitest';
import type { OhlcvExportConfig } from './config';
import { createCandleSource, createOhlcvExportHandler } from './ohlcv-export.factory';
import { ohlcvExportWorker } from './ohlcv-export.worker';
import { HOUR, recordedExchange, T } from './testing/recorded-exchange';

function loadOhlcvExportConfig(env: EnvSource): OhlcvExportConfig {
  return loadConfig(ohlcvExportWorker.descriptor.service, ohlcvExportWorker.configSchema, env);
}

const exchange = recordedExchange;

describe('createOhlcvExportHandler', () => {
  it('uses the bundled datasets by default', async () => {
    const source = await createCandleSource(loadOhlcvExportConfig({}));
    expect(source.provider).toBe('bundled');
    expect(await source.listSymbols()).toEqual(['BTC-USDT', 'ETH-USDT']);
  });

  it('honours TDA_MARKET_DATA_DIR', async () => {
    const source = await createCandleSource(
      loadOhlcvExportConfig({ TDA_MARKET_DATA_DIR: '/nonexistent/tda-market-data' }),
    );
    await expect(
      source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1d' }),
    ).rejects.toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      message: expect.stringContaining('/nonexistent/tda-market-data') as unknown,
    });
  });

  it('TDA_MARKET_DATA=ccxt: candles from the exchange, forming candle per the configured policy', async () => {
    const config = loadOhlcvExportConfig({
      TDA_MARKET_DATA: 'ccxt',
      TDA_OHLCV_INCOMPLETE_BUCKETS: 'dropped',
    });
    const handler = await createOhlcvExportHandler(config, {
      exchange,
      now: () => T + 2 * HOUR + 30 * 60_000, // 10:30: the 10:00 candle is still forming
    });
    const run = makeRun({ 'ohlcv_export:1h': { timeframe: '1h', inputs: { lookback: 5 } } });
    const result = await handler.execute(
      requireHandlerContext(OHLCV_EXPORT_STEP, {
        run,
        stepId: 'ohlcv_export:1h',
        artifacts: new InMemoryArtifactStore(),
        deadline: new Date(T + 3 * HOUR),
        now: () => new Date(T + 2 * HOUR + 30 * 60_000),
      }),
    );
    expect(result.primaryUri).toBe(`gs://tda-artifacts/runs/${run.runId}/1h/ohlcv_export:1h.json`);
    const artifact = JSON.parse(result.artifacts[0]?.data.toString('utf8') ?? '{}') as Record<
      string,
      unknown
    >;
    expect(artifact).toMatchObject({
      source: {
        provider: 'ccxt',
        exchange: 'binance',
        marketSymbol: 'BTC/USDT',
        volumeUnit: 'base',
      },
      incompleteBucketPolicy: 'dropped',
      candleCount: 2,
      range: { from: '2026-09-20T08:00:00Z', to: '2026-09-20T10:00:00Z' },
    });
  });
});
