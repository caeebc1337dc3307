import type { Firestore } from '@google-cloud/firestore';
import { PubSub } from '@google-cloud/pubsub';
import type { FlowRun } from '@tda/contracts';
import { createFirestore, FirestoreFlowRunStore } from '@tda/flow-store';
import { applyTopology, buildTopology, GooglePubSubBroker } from '@tda/messaging';
import { emulatorEndpoints, expectEventually, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collectStepReady,
  ManualClock,
  publishStepEvent,
  simulateWorker,
  startTestOrchestrator,
  type TestOrchestrator,
} from './testing/orchestrator.harness';

describe('orchestrator on the Firestore and Pub/Sub emulators', () => {
  const collection = uniqueName('flow_runs');
  const prefix = uniqueName('orc');
  let firestore: Firestore;
  let pubsub: PubSub;
  let broker: GooglePubSubBroker;
  let orc: TestOrchestrator;

  beforeAll(async () => {
    const { firestoreHost, pubsubHost, projectId } = emulatorEndpoints();
    firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
    pubsub = new PubSub({ projectId, apiEndpoint: pubsubHost, emulatorMode: true });
    await applyTopology(
      pubsub,
      buildTopology({
        prefix,
        stepTypes: ['OHLCV_EXPORT', 'CHART_EXPORT'],
        subscriptionDefaults: { minimumBackoffSeconds: 1, maximumBackoffSeconds: 2 },
      }),
    );
    broker = new GooglePubSubBroker({ pubsub, closeTimeoutMs: 2_000 });
    const clock = new ManualClock(new Date());
    orc = await startTestOrchestrator({
      store: new FirestoreFlowRunStore(firestore, { collection, clock: clock.now }),
      broker,
      clock,
      env: { TDA_PUBSUB_PREFIX: prefix },
    });
  });

  afterAll(async () => {
    await orc.close();
    await broker.close();
    await pubsub.close();
    await firestore.recursiveDelete(firestore.collection(collection));
    await firestore.terminate();
  });

  it('trigger -> step-ready -> worker finalizes -> step event -> next step-ready', async () => {
    const consumer = await collectStepReady(broker, ['OHLCV_EXPORT', 'CHART_EXPORT'], prefix);
    try {
      const res = await orc.request('POST', '/runs', {
        body: {
          flowKey: 'scheduled_month_week_report_v1',
          scope: { symbol: 'BTC-USDT' },
          idempotencyKey: 'int-1',
        },
      });
      expect(res.status).toBe(201);
      const run = res.body as FlowRun;
      expect(run.status).toBe('RUNNING');

      const again = await orc.request('POST', '/runs', {
        body: {
          flowKey: 'scheduled_month_week_report_v1',
          scope: { symbol: 'BTC-USDT' },
          idempotencyKey: 'int-1',
        },
      });
      expect(again.status).toBe(200);
      expect((again.body as FlowRun).runId).toBe(run.runId);

      await expectEventually(
        () => {
          const ids = consumer.received.map((m) => m.body.stepId).sort();
          expect(ids).toEqual(['ohlcv_export:1M', 'ohlcv_export:1w']);
        },
        { timeoutMs: 20_000 },
      );

      orc.clock.advance(1_000);
      const attempt = await simulateWorker(orc.store, run.runId, 'ohlcv_export:1M', orc.clock.now);
      await publishStepEvent(
        broker,
        {
          runId: run.runId,
          stepId: 'ohlcv_export:1M',
          stepType: 'OHLCV_EXPORT',
          status: 'SUCCEEDED',
          attempt,
          at: orc.clock.now().toISOString(),
        },
        prefix,
      );
      await expectEventually(
        () => {
          const charts = consumer.received.filter(
            (m) => m.body.stepId === 'charts:1M:ctpl_default_v1',
          );
          expect(charts.map((m) => m.body.reason)).toEqual(['advance']);
          expect(charts[0]?.attributes['messageType']).toBe('step_ready');
        },
        { timeoutMs: 20_000 },
      );
      const stored = await orc.request('GET', `/runs/${run.runId}`);
      expect((stored.body as FlowRun).steps['charts:1M:ctpl_default_v1']?.status).toBe('READY');
      expect((stored.body as FlowRun).steps['ohlcv_export:1M']?.status).toBe('SUCCEEDED');
      const listed = await orc.request('GET', '/runs?idempotencyKey=int-1');
      expect((listed.body as { runs: FlowRun[] }).runs.map((r) => r.runId)).toEqual([run.runId]);
    } finally {
      await consumer.close();
    }
  });
});
