import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { OhlcvExport, ValidationResult } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { cloudRunManifest, dockerfileOf, projectJsonOf, stepWorkerDeployment } from '@tda/infra';
import { testEnvironment } from '@tda/infra/testing';
import { createMemoryLogger } from '@tda/observability';
import { defineStepType, STEP_TYPE_DESCRIPTORS, stepPolicyTable } from '@tda/step-types';
import {
  bootstrapWorker,
  defineWorker,
  StepInputError,
  workerServiceConfigSchema,
  type StepContext,
  type StepHandler,
  type StepResult,
  type WorkerServiceHandle,
} from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Issue 11 "done when": a new step type is one descriptor + one inputs schema + one handler + a
 * main of a few lines, and nothing else in the tree is edited by hand. This spec builds a small
 * twin of INDICATORS_ON_DEMAND (one SMA; the real step type is libs/step-types
 * indicators-on-demand.step-type.ts and services/worker-indicators-on-demand) from exactly those
 * four parts, runs it through a booted worker and shows the deploy files and README rows that
 * derive from it. Its inputs are a subset of the real inputs contract, which the run document
 * must satisfy (the store validates it); its own schema is stricter.
 */

// 1. The inputs schema (in the tree: contracts/indicators_on_demand_inputs.schema.json, selected
//    by stepType in flow_run.schema.json; `npm run contracts:generate` gives the validator).
const INPUTS_SCHEMA = {
  type: 'object',
  required: ['timeframe', 'indicators', 'ohlcvStepId'],
  properties: {
    timeframe: { type: 'string' },
    ohlcvStepId: { type: 'string', minLength: 1 },
    indicators: {
      type: 'array',
      minItems: 1,
      maxItems: 1,
      items: {
        type: 'object',
        required: ['name', 'params'],
        properties: {
          name: { const: 'SMA' },
          params: {
            type: 'object',
            required: ['period'],
            properties: { period: { type: 'integer', minimum: 2, maximum: 200 } },
            additionalProperties: false,
          },
        },
      },
    },
  },
  additionalProperties: false,
} as const;
interface IndicatorsInputs {
  timeframe: string;
  ohlcvStepId: string;
  indicators: [{ name: 'SMA'; params: { period: number } }];
}
interface IndicatorsArtifact {
  runId: string;
  stepId: string;
  timeframe: string;
  sma: { openTime: string; value: number }[];
}

function validator<T>(schema: object): (data: unknown) => ValidationResult<T> {
  const check = new Ajv({ allErrors: true }).compile(schema);
  return (data) =>
    check(data)
      ? { ok: true, value: data as T }
      : {
          ok: false,
          issues: (check.errors ?? []).map((e) => ({
            path: e.instancePath === '' ? '/' : e.instancePath,
            message: e.message ?? 'invalid',
            keyword: e.keyword,
          })),
        };
}

// 2. The descriptor (in the tree: libs/step-types/src/indicators-on-demand.step-type.ts, added
//    to STEP_TYPE_DESCRIPTORS).
const INDICATORS_STEP = defineStepType({
  stepType: 'INDICATORS_ON_DEMAND',
  service: 'worker-indicators-on-demand',
  description: 'Simple moving average of one OHLCV export.',
  inputsContract: 'indicators_on_demand_inputs',
  inputs: validator<IndicatorsInputs>(INPUTS_SCHEMA),
  artifact: {
    contract: 'indicators',
    validate: validator<IndicatorsArtifact>({
      type: 'object',
      required: ['runId', 'stepId', 'timeframe', 'sma'],
    }),
    identity: (a) => ({ runId: a.runId, stepId: a.stepId, timeframe: a.timeframe }),
  },
  upstream: { ohlcv: { field: 'ohlcvStepId', stepType: 'OHLCV_EXPORT', sameTimeframe: true } },
  policy: DEFAULT_STEP_POLICY,
  deploy: {
    kind: 'Service',
    why: 'Indicator steps take milliseconds: a request-driven Service fed by Pub/Sub push.',
    cpu: '1',
    memory: '512Mi',
    concurrency: 8,
    timeoutSeconds: 120,
    minInstances: 0,
    maxInstances: 5,
  },
});

// 3. The handler: domain logic only — typed inputs, the typed upstream artifact, one result.
class IndicatorsHandler implements StepHandler<typeof INDICATORS_STEP> {
  readonly descriptor = INDICATORS_STEP;

  async execute(ctx: StepContext<typeof INDICATORS_STEP>): Promise<StepResult> {
    const { artifact: ohlcv } = await ctx.upstream('ohlcv');
    const { period } = ctx.inputs.indicators[0].params;
    if (ohlcv.candles.length < period) {
      throw new StepInputError(`period ${period} exceeds the ${ohlcv.candles.length} candles`);
    }
    const sma = ohlcv.candles.slice(period - 1).map((candle, i) => ({
      openTime: candle.openTime,
      value: ohlcv.candles.slice(i, i + period).reduce((sum, c) => sum + c.close, 0) / period,
    }));
    const uri = ctx.artifactUri();
    const artifact = { runId: ctx.run.runId, stepId: ctx.stepId, timeframe: ohlcv.timeframe, sma };
    return {
      artifacts: [
        { uri, data: Buffer.from(JSON.stringify(artifact)), contentType: 'application/json' },
      ],
      primaryUri: uri,
    };
  }
}

// 4. The worker definition; its main.ts is `void runWorker(indicatorsWorker);`.
const indicatorsWorker = defineWorker({
  descriptor: INDICATORS_STEP,
  configSchema: workerServiceConfigSchema,
  create: () => ({ handler: new IndicatorsHandler() }),
});

const OHLCV_ID = 'ohlcv_export:1M';
const STEP_ID = 'indicators_on_demand:1M';

/** A run whose OHLCV step SUCCEEDED (its artifact stored) and whose indicators step is READY. */
function runWithIndicatorsReady(inputs: Record<string, unknown>) {
  const base = makeFlowRun();
  const ohlcvUri = `gs://tda-artifacts/runs/${base.runId}/1M/${OHLCV_ID}.json`;
  const run = {
    ...base,
    steps: {
      [OHLCV_ID]: makeStep({
        stepType: 'OHLCV_EXPORT',
        status: 'SUCCEEDED',
        timeframe: '1M',
        outputs: { gcs_uri: ohlcvUri },
      }),
      [STEP_ID]: makeStep({
        stepType: 'INDICATORS_ON_DEMAND',
        status: 'READY',
        timeframe: '1M',
        dependsOn: [OHLCV_ID],
        inputs,
      }),
    },
  };
  const example = loadExample('ohlcv_export.example.json') as OhlcvExport;
  const ohlcv: OhlcvExport = { ...example, runId: run.runId, stepId: OHLCV_ID };
  return { run, ohlcvUri, ohlcv };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function bootedWorker(): Promise<WorkerServiceHandle> {
  const memory = await memoryWorkerEnv();
  cleanups.push(() => memory.cleanup());
  const handle = await bootstrapWorker(indicatorsWorker, {
    env: memory.env,
    logger: createMemoryLogger().logger,
  });
  cleanups.push(() => handle.close());
  return handle;
}

async function runStep(handle: WorkerServiceHandle, period: number) {
  const { store, artifacts } = handle.backends;
  const inputs = {
    timeframe: '1M',
    indicators: [{ name: 'SMA', params: { period } }],
    ohlcvStepId: OHLCV_ID,
  };
  const { run, ohlcvUri, ohlcv } = runWithIndicatorsReady(inputs);
  await store.create(run);
  await artifacts.put(ohlcvUri, Buffer.from(JSON.stringify(ohlcv)), {
    contentType: 'application/json',
  });
  const step = await deliverStep(handle, {
    runId: run.runId,
    stepId: STEP_ID,
    stepType: 'INDICATORS_ON_DEMAND',
  });
  return { step, ohlcv, artifacts };
}

describe('a new step type: descriptor + inputs schema + handler + a few-line main', () => {
  it('runs through the booted worker: inputs and upstream artifact typed and validated', async () => {
    const handle = await bootedWorker();
    const { step, ohlcv, artifacts } = await runStep(handle, 3);
    expect(step?.status).toBe('SUCCEEDED');
    const uri = step?.outputs.gcs_uri ?? '';
    const artifact = JSON.parse((await artifacts.read(uri)).toString('utf8')) as IndicatorsArtifact;
    expect(artifact.sma).toHaveLength(ohlcv.candles.length - 2);
    const [a, b, c] = ohlcv.candles;
    expect(artifact.sma[0]?.value).toBeCloseTo(
      ((a?.close ?? 0) + (b?.close ?? 0) + (c?.close ?? 0)) / 3,
    );
    expect(step?.outputs.execution?.artifact?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('bad inputs fail the step INVALID_STEP_INPUTS with the schema path, before the handler', async () => {
    const handle = await bootedWorker();
    const { step } = await runStep(handle, 1);
    expect(step?.status).toBe('FAILED');
    expect(step?.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      details: {
        issues: [
          expect.objectContaining({ path: '/indicators/0/params/period', keyword: 'minimum' }),
        ],
      },
    });
  });

  it('a domain check the schema cannot express is the handler’s, and still a clean FAILED step', async () => {
    const handle = await bootedWorker();
    const { step } = await runStep(handle, 200);
    expect(step?.status).toBe('FAILED');
    expect(step?.error).toMatchObject({ code: 'INVALID_STEP_INPUTS', retryable: false });
    expect(step?.error?.message).toMatch(/period 200 exceeds the \d+ candles/);
  });

  it('derives its deployment, manifest, Dockerfile, build target and README row', () => {
    const deployment = stepWorkerDeployment(INDICATORS_STEP);
    expect(deployment).toMatchObject({
      project: 'worker-indicators-on-demand',
      name: 'tda-worker-indicators-on-demand',
      stepType: 'INDICATORS_ON_DEMAND',
      kind: 'Service',
      ingress: 'pubsub-push',
    });
    const environment = testEnvironment('dev');
    const manifest = cloudRunManifest(deployment, environment);
    expect(manifest.metadata.name).toBe('tda-worker-indicators-on-demand');
    expect(dockerfileOf(deployment.project, '24.21.0')).toContain(
      'ARG SERVICE=worker-indicators-on-demand',
    );
    expect(JSON.parse(projectJsonOf(deployment))).toMatchObject({
      name: 'worker-indicators-on-demand',
      tags: ['type:service'],
    });
    expect(stepPolicyTable([INDICATORS_STEP]).rows).toEqual([
      [
        '`INDICATORS_ON_DEMAND`',
        '`worker-indicators-on-demand`',
        '120 s',
        '3',
        '60 s / 15 s',
        '3 tries, 1 s / 2 s (cap 4 s)',
      ],
    ]);
  });

  it('the real workers are built the same way: each main.ts is a few lines', () => {
    const root = resolve(__dirname, '../..');
    for (const { service } of STEP_TYPE_DESCRIPTORS) {
      const main = readFileSync(join(root, 'services', service, 'src/main.ts'), 'utf8');
      const code = main.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('/'));
      expect(code.length, service).toBeLessThanOrEqual(4);
      expect(main).toMatch(/^void runWorker\(\w+Worker\);$/m);
    }
    expect(STEP_TYPE_DESCRIPTORS.length).toBeGreaterThanOrEqual(3);
  });
});
