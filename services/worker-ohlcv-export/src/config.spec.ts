import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import { describe, expect, it } from 'vitest';
import type { OhlcvExportConfig } from './config';
import { ohlcvExportWorker } from './ohlcv-export.worker';

/** The config exactly as the worker's boot validates it (bootstrapWorker → loadConfig). */
function loadOhlcvExportConfig(env: EnvSource): OhlcvExportConfig {
  return loadConfig(ohlcvExportWorker.descriptor.service, ohlcvExportWorker.configSchema, env);
}

describe('worker-ohlcv-export config', () => {
  it('is the config of the worker-ohlcv-export service (OHLCV_EXPORT steps)', () => {
    expect(ohlcvExportWorker.descriptor).toMatchObject({
      service: 'worker-ohlcv-export',
      stepType: 'OHLCV_EXPORT',
    });
  });

  it('defaults to the bundled data, Binance for ccxt and marked forming buckets', () => {
    expect(loadOhlcvExportConfig({})).toMatchObject({
      TDA_BACKEND: 'memory',
      PORT: 8080,
      TDA_MARKET_DATA: 'bundled',
      TDA_CCXT_EXCHANGE: 'binance',
      TDA_CCXT_TIMEOUT_MS: 10_000,
      TDA_OHLCV_INCOMPLETE_BUCKETS: 'marked',
      TDA_ARTIFACTS_BUCKET: 'tda-artifacts',
    });
    expect(loadOhlcvExportConfig({}).TDA_MARKET_DATA_DIR).toBeUndefined();
  });

  it('reads the market data settings', () => {
    expect(
      loadOhlcvExportConfig({
        TDA_MARKET_DATA: 'ccxt',
        TDA_CCXT_EXCHANGE: 'kraken',
        TDA_CCXT_TIMEOUT_MS: '5000',
        TDA_MARKET_DATA_DIR: '/srv/data',
        TDA_OHLCV_INCOMPLETE_BUCKETS: 'dropped',
      }),
    ).toMatchObject({
      TDA_MARKET_DATA: 'ccxt',
      TDA_CCXT_EXCHANGE: 'kraken',
      TDA_CCXT_TIMEOUT_MS: 5000,
      TDA_MARKET_DATA_DIR: '/srv/data',
      TDA_OHLCV_INCOMPLETE_BUCKETS: 'dropped',
    });
  });

  it('fails fast naming every bad key', () => {
    let error: unknown;
    try {
      loadOhlcvExportConfig({
        TDA_MARKET_DATA: 'yahoo',
        TDA_CCXT_EXCHANGE: 'Binance!',
        TDA_OHLCV_INCOMPLETE_BUCKETS: 'kept',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).service).toBe('worker-ohlcv-export');
    const problems = (error as ConfigError).problems.join('\n');
    for (const key of ['TDA_MARKET_DATA', 'TDA_CCXT_EXCHANGE', 'TDA_OHLCV_INCOMPLETE_BUCKETS']) {
      expect(problems).toContain(key);
    }
  });

  it('applies the shared backend rules (emulators need both hosts)', () => {
    expect(() => loadOhlcvExportConfig({ TDA_BACKEND: 'emulators' })).toThrow(
      /FIRESTORE_EMULATOR_HOST: is required when TDA_BACKEND=emulators/,
    );
  });

  it('reads the Pub/Sub push ingress and requires its OIDC settings (TDA_INGRESS=push)', () => {
    expect(loadOhlcvExportConfig({}).TDA_INGRESS).toBe('pull');
    expect(
      loadOhlcvExportConfig({
        TDA_INGRESS: 'push',
        TDA_PUSH_AUDIENCE: 'tda-worker-ohlcv-export',
        TDA_PUSH_SERVICE_ACCOUNT: 'tda-pubsub-push@acme.iam.gserviceaccount.com',
      }),
    ).toMatchObject({
      TDA_INGRESS: 'push',
      TDA_PUSH_AUDIENCE: 'tda-worker-ohlcv-export',
      TDA_PUSH_SERVICE_ACCOUNT: 'tda-pubsub-push@acme.iam.gserviceaccount.com',
    });
    expect(() => loadOhlcvExportConfig({ TDA_INGRESS: 'push' })).toThrow(
      /TDA_PUSH_AUDIENCE: is required when TDA_INGRESS=push[\s\S]*TDA_PUSH_SERVICE_ACCOUNT: is required when TDA_INGRESS=push/,
    );
  });
});
