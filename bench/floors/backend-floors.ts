import { performance } from 'node:perf_hooks';
import { FieldValue, type Firestore } from '@google-cloud/firestore';
import { PubSub } from '@google-cloud/pubsub';
import type { EmulatorEndpoints } from '@tda/emulators';
import { createFirestore } from '@tda/flow-store';
import { GooglePubSubBroker } from '@tda/messaging';
import { latencyStats, type LatencyStats } from '../bench-kit';

/**
 * The floors (issue 16): what the backing services cost before TDA adds anything, measured by
 * the platform part on the emulators under test, first, in the same run as the figures they are
 * compared with. Firestore: one document read plus one update conditional on the read's update
 * time (what every TDA write of a run document is). Pub/Sub: publish → delivered to a
 * subscriber, with the clients TDA uses (GooglePubSubBroker: its publish batching, a streaming
 * pull, flow control). The hop floor: both in a row, as one TDA hop with nothing of TDA in it.
 */

export interface FirestoreFloorRow extends LatencyStats {
  concurrency: number;
  ops: number;
  opsPerSecond: number;
}

export interface PubSubFloor {
  latency: LatencyStats & { messages: number };
  burst: { messages: number; messagesPerSecond: number };
}

/** `workers` loops, each on its own document: get, then update at the read's update time. */
export async function firestoreFloor(
  firestore: Firestore,
  collection: string,
  workers: number,
  opsPerWorker: number,
): Promise<FirestoreFloorRow> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const ref = firestore.collection(collection).doc(`w${workers}-${w}`);
      await ref.set({ n: 0 });
      for (let i = 0; i < opsPerWorker; i += 1) {
        const t0 = performance.now();
        const snapshot = await ref.get();
        const lastUpdateTime = snapshot.updateTime;
        if (lastUpdateTime === undefined) throw new Error('the document vanished');
        await ref.update({ n: FieldValue.increment(1) }, { lastUpdateTime });
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const ops = workers * opsPerWorker;
  return { concurrency: workers, ops, opsPerSecond: ops / elapsed, ...latencyStats(latencies) };
}

/** Publish one, wait for its delivery, `messages` times; then a burst of `burst` at once. */
export async function pubsubFloor(
  pubsub: PubSub,
  messages: number,
  burst: number,
): Promise<PubSubFloor> {
  const name = `bench-floor-${Date.now().toString(36)}`;
  const [topic] = await pubsub.createTopic(name);
  await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
  const broker = new GooglePubSubBroker({ pubsub });
  const waiting = new Map<number, () => void>();
  const handle = await broker.subscribe(
    `${name}-sub`,
    (message) => {
      message.ack();
      const { seq } = JSON.parse(message.data.toString('utf8')) as { seq: number };
      waiting.get(seq)?.();
    },
    { maxInFlight: 10 },
  );
  const delivered = (seq: number) => new Promise<void>((resolve) => waiting.set(seq, resolve));
  try {
    const latencies: number[] = [];
    for (let seq = 0; seq < messages; seq += 1) {
      const arrived = delivered(seq);
      const t0 = performance.now();
      await broker.publish(name, { data: { seq } });
      await arrived;
      latencies.push(performance.now() - t0);
    }
    const seqs = Array.from({ length: burst }, (_, i) => messages + i);
    const all = Promise.all(seqs.map(delivered));
    const t0 = performance.now();
    await Promise.all(seqs.map((seq) => broker.publish(name, { data: { seq } })));
    await all;
    const seconds = (performance.now() - t0) / 1000;
    return {
      latency: { messages, ...latencyStats(latencies) },
      burst: { messages: burst, messagesPerSecond: burst / seconds },
    };
  } finally {
    await handle.close();
    await broker.close();
  }
}

export interface HopFloorRow extends LatencyStats {
  concurrency: number;
  hops: number;
}

/**
 * The floor of one TDA hop, measured end to end with the same clients: publish → delivered →
 * get the document → update it conditional on the read (what a worker does from a step-ready
 * message to its claim, and the orchestrator from a step event to the next READY). `loops`
 * concurrent loops, each on its own document.
 */
export async function hopFloor(
  firestore: Firestore,
  pubsub: PubSub,
  loops: number,
  hopsPerLoop: number,
): Promise<HopFloorRow> {
  const name = `bench-hop-${loops}-${Date.now().toString(36)}`;
  const [topic] = await pubsub.createTopic(name);
  await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
  const broker = new GooglePubSubBroker({ pubsub });
  const done = new Map<string, (at: number) => void>();
  const collection = firestore.collection(`bench_hop_${Date.now().toString(36)}`);
  const handle = await broker.subscribe(
    `${name}-sub`,
    (message) => {
      const { doc, seq } = JSON.parse(message.data.toString('utf8')) as {
        doc: string;
        seq: number;
      };
      void (async () => {
        const ref = collection.doc(doc);
        const snapshot = await ref.get();
        const lastUpdateTime = snapshot.updateTime;
        if (lastUpdateTime === undefined) throw new Error('the document vanished');
        await ref.update({ n: FieldValue.increment(1) }, { lastUpdateTime });
        message.ack();
        done.get(`${doc}/${seq}`)?.(performance.now());
      })().catch(() => message.nack());
    },
    { maxInFlight: 10 },
  );
  try {
    const latencies: number[] = [];
    await Promise.all(
      Array.from({ length: loops }, async (_, w) => {
        const doc = `loop-${w}`;
        await collection.doc(doc).set({ n: 0 });
        for (let seq = 0; seq < hopsPerLoop; seq += 1) {
          const arrived = new Promise<number>((resolve) => done.set(`${doc}/${seq}`, resolve));
          const t0 = performance.now();
          await broker.publish(name, { data: { doc, seq } });
          latencies.push((await arrived) - t0);
        }
      }),
    );
    return { concurrency: loops, hops: latencies.length, ...latencyStats(latencies) };
  } finally {
    await handle.close();
    await broker.close();
  }
}

/** The raw Firestore and Pub/Sub clients the floors are measured with, on `endpoints`. */
export function floorClients(endpoints: EmulatorEndpoints): {
  firestore: Firestore;
  pubsub: PubSub;
} {
  return {
    firestore: createFirestore({
      projectId: endpoints.projectId,
      emulatorHost: endpoints.firestoreHost,
    }),
    pubsub: new PubSub({
      projectId: endpoints.projectId,
      apiEndpoint: endpoints.pubsubHost,
      emulatorMode: true,
    }),
  };
}
