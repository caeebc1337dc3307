import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import { CHART_EXPORT_STEP } from '@tda/step-types';
import { describe, expect, it } from 'vitest';
import { createChartExportHandler } from './chart-export.factory';
import { chartExportWorker } from './chart-export.worker';
import type { ChartExportConfig } from './config';

/** The config exactly as the worker's boot validates it (bootstrapWorker → loadConfig). */
function loadChartExportConfig(env: EnvSource): ChartExportConfig {
  return loadConfig(chartExportWorker.descriptor.service, chartExportWorker.configSchema, env);
}

describe('worker-chart-export config', () => {
  it('is the config of the worker-chart-export service (CHART_EXPORT steps)', () => {
    expect(chartExportWorker.descriptor).toBe(CHART_EXPORT_STEP);
    expect(chartExportWorker.descriptor).toMatchObject({
      service: 'worker-chart-export',
      stepType: 'CHART_EXPORT',
    });
  });

  it('defaults to the memory backend and the seed 002 image limit', () => {
    expect(loadChartExportConfig({})).toMatchObject({
      TDA_BACKEND: 'memory',
      TDA_ARTIFACTS_BUCKET: 'tda-artifacts',
      TDA_ARTIFACTS_PREFIX: 'runs',
      TDA_MAX_CHART_IMAGE_BYTES: 262_144,
      PORT: 8080,
    });
  });

  it('coerces numbers from env strings', () => {
    expect(
      loadChartExportConfig({ TDA_MAX_CHART_IMAGE_BYTES: '131072' }).TDA_MAX_CHART_IMAGE_BYTES,
    ).toBe(131_072);
  });

  it('names every bad variable', () => {
    let error: unknown;
    try {
      loadChartExportConfig({ TDA_MAX_CHART_IMAGE_BYTES: '10', TDA_BACKEND: 'emulators' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).service).toBe('worker-chart-export');
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/TDA_MAX_CHART_IMAGE_BYTES/);
    expect(problems).toMatch(/FIRESTORE_EMULATOR_HOST: is required when TDA_BACKEND=emulators/);
  });

  it('builds a CHART_EXPORT handler with the configured limit', () => {
    const handler = createChartExportHandler({ maxChartImageBytes: 131_072 });
    expect(handler.descriptor).toBe(CHART_EXPORT_STEP);
    expect(handler.descriptor.stepType).toBe('CHART_EXPORT');
    expect(handler.renderer.maxImageBytes).toBe(131_072);
    expect(createChartExportHandler().renderer.maxImageBytes).toBe(262_144);
  });
});
