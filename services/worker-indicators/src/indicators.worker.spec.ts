import 'reflect-metadata';
import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import { validate, type FlowRun } from '@tda/contracts';
import { createMemoryLogger } from '@tda/observability';
import { bootstrapWorker, type WorkerServiceHandle } from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { indicatorsOnDemandWorker } from './indicators.worker';
import { runWithIndicatorsReady, weeklyExport, type IndicatorsRun } from './testing';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function loadIndicatorsConfig(env: EnvSource) {
  return loadConfig(
    indicatorsOnDemandWorker.descriptor.service,
    indicatorsOnDemandWorker.configSchema,
    env,
  );
}

async function boot(extraEnv: Record<string, string> = {}) {
  const memory = await memoryWorkerEnv(extraEnv);
  cleanups.push(() => memory.cleanup());
  const log = createMemoryLogger({ service: 'worker-indicators', level: 'debug' });
  const handle = await bootstrapWorker(indicatorsOnDemandWorker, {
    env: memory.env,
    logger: log.logger,
  });
  cleanups.push(() => handle.close());
  return { handle, log };
}

/** Stores the run (and the OHLCV artifact unless `ohlcv` is null), delivers the step, returns it. */
async function runStep(
  handle: WorkerServiceHandle,
  setup: IndicatorsRun,
  options: { inputs?: Record<string, unknown>; ohlcv?: null } = {},
) {
  const { store, artifacts } = handle.backends;
  const created = await store.create(setup.run);
  if (options.inputs !== undefined) {
    // An edited document (the create path would refuse it): the worker must refuse it too.
    await store.update(
      setup.run.runId,
      { [`steps.${setup.stepId}.inputs`]: options.inputs },
      created.version,
    );
  }
  if (options.ohlcv !== null) {
    await artifacts.put(setup.ohlcvUri, Buffer.from(JSON.stringify(setup.ohlcv)), {
      contentType: 'application/json',
    });
  }
  return deliverStep(handle, {
    runId: setup.run.runId,
    stepId: setup.stepId,
    stepType: 'INDICATORS_ON_DEMAND',
  });
}

const inputsOf = (run: FlowRun, stepId: string) => run.steps[stepId]?.inputs ?? {};

describe('indicatorsOnDemandWorker config', () => {
  it('30 tail points by default, 1..50 accepted, a bad value named', () => {
    expect(loadIndicatorsConfig({})).toMatchObject({ TDA_INDICATORS_TAIL_POINTS: 30 });
    expect(loadIndicatorsConfig({ TDA_INDICATORS_TAIL_POINTS: '12' })).toMatchObject({
      TDA_INDICATORS_TAIL_POINTS: 12,
    });
    expect(() => loadIndicatorsConfig({ TDA_INDICATORS_TAIL_POINTS: '500' })).toThrow(ConfigError);
  });
});

describe('indicatorsOnDemandWorker (booted, memory backend)', () => {
  it('computes the requested indicators of the run’s weekly export: SUCCEEDED, artifact written', async () => {
    const { handle, log } = await boot({ TDA_INDICATORS_TAIL_POINTS: '10' });
    const setup = runWithIndicatorsReady(weeklyExport(), [
      { name: 'RSI' },
      { name: 'VWAP' },
      { name: 'SMA', params: { period: 200 } },
    ]);
    const step = await runStep(handle, setup);
    expect(step.status).toBe('SUCCEEDED');
    const uri = step.outputs.gcs_uri ?? '';
    expect(uri).toBe(`gs://tda-artifacts/runs/${setup.run.runId}/1w/${setup.stepId}.json`);
    const read = validate.indicatorValues(
      JSON.parse((await handle.backends.artifacts.read(uri)).toString('utf8')),
    );
    if (!read.ok) throw new Error(JSON.stringify(read.issues));
    expect(read.value.indicators.map((i) => [i.label, i.status, i.tail.length])).toEqual([
      ['RSI(14)', 'ok', 10],
      ['VWAP', 'ok', 10],
      ['SMA(200)', 'insufficient_data', 0],
    ]);
    expect(step.outputs.execution).toMatchObject({
      indicators: { requested: 3, computed: 2, insufficient: ['SMA(200)'], candles: 25 },
    });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'INDICATORS_ON_DEMAND',
      tailPoints: 10,
    });
  });

  it('an unknown indicator in the step document: FAILED INVALID_STEP_INPUTS naming the field', async () => {
    const { handle } = await boot();
    const setup = runWithIndicatorsReady(weeklyExport(), [{ name: 'RSI' }]);
    const bad = {
      ...inputsOf(setup.run, setup.stepId),
      indicators: [{ name: 'ICHIMOKU', params: {} }],
    };
    const step = await runStep(handle, setup, { inputs: bad });
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: { issues: [expect.objectContaining({ path: '/indicators/0/name' })] },
    });
    expect(step.outputs.gcs_uri).toBeUndefined();
  });

  it('parameters out of the catalogue’s bounds: FAILED with the handler’s sanitized message', async () => {
    const { handle } = await boot();
    const setup = runWithIndicatorsReady(weeklyExport(), [{ name: 'RSI' }]);
    const bad = {
      ...inputsOf(setup.run, setup.stepId),
      indicators: [{ name: 'STOCHASTIC', params: { k: 14, d: 3, secret: 1 } }],
    };
    const step = await runStep(handle, setup, { inputs: bad });
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: 'inputs.indicators[0]: unknown parameter(s) of STOCHASTIC',
      details: { field: 'indicators', unknown: ['secret'], allowed: ['k', 'd'] },
    });
  });

  it('the OHLCV artifact missing: FAILED INVALID_STEP_INPUTS, nothing written', async () => {
    const { handle } = await boot();
    const setup = runWithIndicatorsReady(weeklyExport(), [{ name: 'RSI' }]);
    const step = await runStep(handle, setup, { ohlcv: null });
    expect(step.status).toBe('FAILED');
    expect(step.error?.code).toBe('INVALID_STEP_INPUTS');
    expect(step.outputs.gcs_uri).toBeUndefined();
  });
});
