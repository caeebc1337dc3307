import { performance } from 'node:perf_hooks';
import type { ArtifactStore } from '@tda/artifacts';
import type { FlowRunStore } from '@tda/flow-store';
import type { MessageBroker } from '@tda/messaging';
import { latencyStats, withCpu, type LatencyStats } from '../bench-kit';
import type { FirestoreFloorRow, HopFloorRow, PubSubFloor } from '../floors/backend-floors';
import { CHAIN_FLOW_KEY, noopCatalogue } from './noop-flows';

/** Where the floors publish: a step-ready topic and subscription no worker of the stack reads. */
export interface FloorChannel {
  topic: string;
  subscription: string;
}

const catalogue = noopCatalogue();

/** A stored 10-step no-op run to read and update (the size of a typical run document). */
async function floorRun(store: FlowRunStore): Promise<string> {
  const run = catalogue.createRun({
    flowKey: CHAIN_FLOW_KEY,
    scope: { symbol: 'BTC-USDT', asOf: '2026-09-01T00:00:00Z', length: 10 },
    ownerId: 'bench-floor',
    trigger: { type: 'USER', source: 'bench' },
    now: new Date(),
    random: Math.random,
  });
  await store.create(run);
  return run.runId;
}

/** One read and one update conditional on it, through the store port. */
async function readAndUpdate(store: FlowRunStore, runId: string): Promise<void> {
  const read = await store.get(runId);
  if (read === null) throw new Error(`floor run ${runId} vanished`);
  await store.update(runId, { 'steps.noop_001.readyAt': new Date().toISOString() }, read.version);
}

/** The run store's own floor: `loops` concurrent get + conditional update loops. */
export async function storeFloor(
  store: FlowRunStore,
  loops: number,
  opsPerLoop: number,
): Promise<FirestoreFloorRow> {
  const latencies: number[] = [];
  const runIds = await Promise.all(Array.from({ length: loops }, () => floorRun(store)));
  const started = performance.now();
  await Promise.all(
    runIds.map(async (runId) => {
      for (let i = 0; i < opsPerLoop; i += 1) {
        const t0 = performance.now();
        await readAndUpdate(store, runId);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const ops = loops * opsPerLoop;
  const opsPerSecond = ops / ((performance.now() - started) / 1000);
  return { concurrency: loops, ops, opsPerSecond, ...latencyStats(latencies) };
}

/**
 * The bus floor (publish → delivered, then a burst) and the hop floor (publish → delivered →
 * read → conditional update) through the broker and store ports, on `channel`.
 */
export async function busAndHopFloors(
  store: FlowRunStore,
  broker: MessageBroker,
  channel: FloorChannel,
  sizes: { messages: number; burst: number; concurrency: readonly number[] },
): Promise<{ pubsub: PubSubFloor; hop: HopFloorRow[] }> {
  const arrived = new Map<string, () => void>();
  const handle = await broker.subscribe(
    channel.subscription,
    (message) => {
      const { id, runId } = JSON.parse(message.data.toString('utf8')) as {
        id: string;
        runId?: string;
      };
      const settle = () => {
        message.ack();
        arrived.get(id)?.();
      };
      if (runId === undefined) return settle();
      readAndUpdate(store, runId).then(settle, () => message.nack());
    },
    { maxInFlight: 10 },
  );
  const send = (id: string, runId?: string): Promise<number> => {
    const delivered = new Promise<void>((resolve) => arrived.set(id, resolve));
    const t0 = performance.now();
    return broker
      .publish(channel.topic, { data: { id, ...(runId === undefined ? {} : { runId }) } })
      .then(() => delivered)
      .then(() => performance.now() - t0);
  };
  try {
    const latencies: number[] = [];
    for (let i = 0; i < sizes.messages; i += 1) latencies.push(await send(`m${i}`));
    const t0 = performance.now();
    await Promise.all(Array.from({ length: sizes.burst }, (_, i) => send(`b${i}`)));
    const burstSeconds = (performance.now() - t0) / 1000;
    const hop: HopFloorRow[] = [];
    for (const loops of sizes.concurrency) {
      const samples: number[] = [];
      const perLoop = Math.max(2, Math.ceil(sizes.messages / loops));
      await Promise.all(
        Array.from({ length: loops }, async (_, w) => {
          const runId = await floorRun(store);
          for (let i = 0; i < perLoop; i += 1)
            samples.push(await send(`h${loops}-${w}-${i}`, runId));
        }),
      );
      hop.push({ concurrency: loops, hops: samples.length, ...latencyStats(samples) });
    }
    return {
      pubsub: {
        latency: { messages: sizes.messages, ...latencyStats(latencies) },
        burst: { messages: sizes.burst, messagesPerSecond: sizes.burst / burstSeconds },
      },
      hop,
    };
  } finally {
    await handle.close();
  }
}

export interface ArtifactFloorRow extends LatencyStats {
  concurrency: number;
  ops: number;
  opsPerSecond: number;
  /** CPU of this process per op (µs), the filesystem's threads included. */
  cpuMicrosPerOp: number;
}

/** A no-op step's artifact: a few hundred bytes of JSON. */
const FLOOR_ARTIFACT = Buffer.from(JSON.stringify({ floor: true, pad: 'x'.repeat(256) }));

/**
 * The artifact store's floor for what one step does to it: the recovery check (exists) and a
 * create-only put, at `loops` at once, ten objects to a directory as a run's steps are.
 */
export async function artifactFloor(
  artifacts: ArtifactStore,
  loops: number,
  opsPerLoop: number,
): Promise<ArtifactFloorRow> {
  const latencies: number[] = [];
  const tag = `${Date.now().toString(36)}-${loops}`;
  const { result: seconds, cpu } = await withCpu(async () => {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: loops }, async (_, loop) => {
        for (let i = 0; i < opsPerLoop; i += 1) {
          const uri = `gs://tda-bench-floor/${tag}/l${loop}-${Math.floor(i / 10)}/o${i % 10}.json`;
          const t0 = performance.now();
          await artifacts.exists(uri);
          await artifacts.put(uri, FLOOR_ARTIFACT, { contentType: 'application/json' });
          latencies.push(performance.now() - t0);
        }
      }),
    );
    return (performance.now() - started) / 1000;
  });
  const ops = loops * opsPerLoop;
  return {
    concurrency: loops,
    ops,
    opsPerSecond: ops / seconds,
    cpuMicrosPerOp: (cpu.processSeconds * 1e6) / ops,
    ...latencyStats(latencies),
  };
}
