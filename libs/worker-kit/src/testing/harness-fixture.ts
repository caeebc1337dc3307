import { InMemoryArtifactStore } from '@tda/artifacts';
import type { FlowRun, FlowStep, StepReadyMessage, StepType } from '@tda/contracts';
import type { RunPatch } from '@tda/flow-engine';
import { InMemoryFlowRunStore, updateWithRetry } from '@tda/flow-store';
import { makeFlowRun } from '@tda/flow-store/testing';
import { buildTopology, InMemoryBroker, STEP_EVENTS_TOPIC } from '@tda/messaging';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { afterEach, expect } from 'vitest';
import type { StepHarnessMetrics } from '../harness-metrics';
import type { StepHarnessPolicy } from '../harness-policy';
import { StepHarness } from '../harness/step-harness';
import { CountingArtifactStore } from './counting-artifact.store';
import { CountingFlowRunStore } from './counting-flow-run.store';
import { RecordingPublisher } from './recording.publisher';
import { TestStepHandler } from './test-step.handler';

export const OHLCV = 'ohlcv_export:1d';
export const REPORT = 'llm_report:1d:prompt_day_v1';
export const T0 = Date.parse('2026-01-15T10:00:10.000Z');
export const first = { deliveryAttempt: 1 };

/** Fast policy: no heartbeat unless a test asks for one, millisecond backoffs. */
export const FAST: Partial<StepHarnessPolicy> = {
  leaseMs: 60_000,
  heartbeatMs: 30_000,
  timeoutMs: 5_000,
  handlerRetryBaseDelayMs: 1,
  handlerRetryMaxDelayMs: 4,
  artifactWriteBaseDelayMs: 1,
  infraBaseDelayMs: 1,
};

export interface HarnessFixtureOptions {
  run?: FlowRun;
  handler?: TestStepHandler;
  policy?: Partial<StepHarnessPolicy>;
  metrics?: StepHarnessMetrics;
  /** Default: a fixed clock at T0. */
  clock?: () => Date;
}

/**
 * A harness over in-memory adapters that count what the harness does (reads, writes, puts,
 * events), a fixed clock and the default fixture run (makeFlowRun: an OHLCV step READY, a
 * report step PENDING on it). Brokers are closed by `close()`.
 */
export async function harnessFixture(options: HarnessFixtureOptions = {}) {
  const clock = options.clock ?? ((): Date => new Date(T0));
  const store = new CountingFlowRunStore(new InMemoryFlowRunStore({ clock }));
  const artifacts = new CountingArtifactStore(new InMemoryArtifactStore());
  const broker = new InMemoryBroker();
  broker.applyTopology(buildTopology());
  const publisher = new RecordingPublisher(broker);
  const log: MemoryLogger = createMemoryLogger();
  const handler = options.handler ?? new TestStepHandler('OHLCV_EXPORT');
  const run = options.run ?? makeFlowRun();
  await store.inner.create(run);
  const makeHarness = (owner = 'worker-a', stepHandler: TestStepHandler = handler): StepHarness =>
    new StepHarness({
      handler: stepHandler,
      store,
      artifacts,
      publisher,
      logger: log.logger,
      clock,
      owner,
      policy: { ...FAST, ...options.policy },
      random: () => 0,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
  return {
    store,
    artifacts,
    publisher,
    log,
    handler,
    run,
    clock,
    harness: makeHarness(),
    makeHarness,
    close: () => broker.close(),
    message(
      stepId: string,
      stepType: StepType = run.steps[stepId]?.stepType ?? 'OHLCV_EXPORT',
    ): StepReadyMessage {
      return {
        runId: run.runId,
        stepId,
        stepType,
        attempt: 0,
        dispatchedAt: clock().toISOString(),
      };
    },
    async step(stepId: string): Promise<FlowStep> {
      const current = await store.inner.get(run.runId);
      const step = current?.run.steps[stepId];
      if (step === undefined) throw new Error(`no step ${stepId}`);
      return step;
    },
    /** A write by someone else (not counted as the harness's). */
    async writeAsOther(patch: RunPatch | ((run: FlowRun) => RunPatch)): Promise<void> {
      await updateWithRetry(store.inner, run.runId, (current) => ({
        kind: 'write',
        patch: typeof patch === 'function' ? patch(current) : patch,
        result: null,
      }));
    },
    primaryUri(stepId: string, timeframe = '1d'): string {
      return `gs://tda-artifacts/runs/${run.runId}/${timeframe}/${stepId}.json`;
    },
    /** The bytes a TestStepHandler's jsonResult writes for `stepId` (a valid test artifact). */
    artifactBytes(stepId: string, body: Record<string, unknown> = { ok: true }): Buffer {
      return Buffer.from(JSON.stringify({ runId: run.runId, stepId, ...body }));
    },
    stepEvents(): unknown[] {
      return publisher.published.filter((p) => p.topic === STEP_EVENTS_TOPIC).map((p) => p.body);
    },
  };
}

export type HarnessFixture = Awaited<ReturnType<typeof harnessFixture>>;

/** A harnessFixture factory for one spec file: every fixture it made is closed after each test. */
export function harnessFixtures(): (options?: HarnessFixtureOptions) => Promise<HarnessFixture> {
  const open: HarnessFixture[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((f) => f.close()));
  });
  return async (options = {}) => {
    const f = await harnessFixture(options);
    open.push(f);
    return f;
  };
}

/** A promise with its resolver, to let a test act while a handler is mid-execution. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function expectNoSideEffects(f: HarnessFixture): void {
  expect(f.store.updates).toBe(0);
  expect(f.store.writes).toBe(0);
  expect(f.artifacts.puts).toBe(0);
  expect(f.handler.executions).toBe(0);
  expect(f.stepEvents()).toEqual([]);
}
