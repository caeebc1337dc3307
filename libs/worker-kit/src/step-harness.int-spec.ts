import type { Firestore } from '@google-cloud/firestore';
import { InMemoryArtifactStore } from '@tda/artifacts';
import { createFirestore, FirestoreFlowRunStore } from '@tda/flow-store';
import { makeFlowRun } from '@tda/flow-store/testing';
import { createMemoryLogger } from '@tda/observability';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StepHarness } from './harness/step-harness';
import {
  CountingArtifactStore,
  CountingFlowRunStore,
  jsonResult,
  RecordingPublisher,
  TestStepHandler,
} from './testing';

const OHLCV = 'ohlcv_export:1d';

let firestore: Firestore;
const collection = uniqueName('flow_runs');

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.recursiveDelete(firestore.collection(collection));
  await firestore.terminate();
});

describe('StepHarness on the Firestore emulator', () => {
  it('two workers receiving the same step-ready message at once: exactly one execution and one finalize', async () => {
    const store = new CountingFlowRunStore(new FirestoreFlowRunStore(firestore, { collection }));
    const artifacts = new CountingArtifactStore(new InMemoryArtifactStore());
    const publisher = new RecordingPublisher();
    const log = createMemoryLogger();
    const handler = new TestStepHandler('OHLCV_EXPORT');
    handler.executeImpl = async (ctx) => {
      // Long enough that the losing worker's re-read sees the step RUNNING, not finished.
      await new Promise((resolve) => setTimeout(resolve, 100));
      return jsonResult(ctx);
    };
    const worker = (owner: string): StepHarness =>
      new StepHarness({
        handler,
        store,
        artifacts,
        publisher,
        logger: log.logger,
        owner,
        policy: { heartbeatMs: 30_000, infraBaseDelayMs: 10 },
      });
    const a = worker('worker-a');
    const b = worker('worker-b');

    // Several runs, so a lucky interleaving cannot hide a double claim.
    for (const suffix of ['race1', 'race2', 'race3']) {
      const run = makeFlowRun({ suffix });
      await store.inner.create(run);
      const message = {
        runId: run.runId,
        stepId: OHLCV,
        stepType: 'OHLCV_EXPORT' as const,
        attempt: 0,
        dispatchedAt: new Date().toISOString(),
      };
      const executionsBefore = handler.executions;
      const outcomes = await Promise.all([
        a.handleStepReady(message, { deliveryAttempt: 1 }),
        b.handleStepReady(message, { deliveryAttempt: 1 }),
      ]);

      expect(outcomes.map((o) => o.kind).sort()).toEqual(['executed', 'noop']);
      expect(handler.executions - executionsBefore).toBe(1);
      const statusWrites = store.recorded
        .filter((u) => u.ok && u.runId === run.runId && `steps.${OHLCV}.status` in u.patch)
        .map((u) => u.patch[`steps.${OHLCV}.status`]);
      expect(statusWrites).toEqual(['RUNNING', 'SUCCEEDED']);
      const stored = await store.inner.get(run.runId);
      expect(stored?.run.steps[OHLCV]).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
      expect(
        publisher.published.filter((p) => (p.body as { runId?: string }).runId === run.runId),
      ).toHaveLength(1);
    }
    expect(artifacts.created).toHaveLength(3);
  });
});
