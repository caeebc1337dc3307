import { startEmulators, type EmulatorEndpoints } from '@tda/emulators';
import { stepReadySubscription, stepReadyTopic } from '@tda/messaging';
import { machine, type BenchPart, type BenchPartOptions } from '../bench-kit';
import {
  firestoreFloor,
  floorClients,
  hopFloor,
  pubsubFloor,
  type FirestoreFloorRow,
  type HopFloorRow,
  type PubSubFloor,
} from '../floors/backend-floors';
import {
  marginalPerStep,
  measureHops,
  measureThroughput,
  stepsOf,
  type HopRow,
  type Shape,
  type ThroughputRow,
} from './platform-measure';
import { startPlatformStack, type PlatformStack } from './platform-stack';
import { IN_MEMORY, renderPlatform } from './platform.render';
import { artifactFloor, busAndHopFloors, storeFloor, type ArtifactFloorRow } from './port-floors';

export interface PlatformFloors {
  firestore: FirestoreFloorRow[];
  pubsub: PubSubFloor;
  hop: HopFloorRow[];
  /** The stack's artifact store (local files in both parts): a step's exists + put. */
  artifacts: ArtifactFloorRow[];
}

export interface PlatformData {
  machine: ReturnType<typeof machine>;
  backend: string;
  floors: PlatformFloors;
  hops: HopRow[];
  throughput: ThroughputRow[];
  /** Calls per extra step: the longest chain row minus the shortest, per step. */
  marginalPerStep: Record<string, number>;
  /** No-op steps each stack ran before its throughput rows (Sizes.warmUpSteps). */
  warmUpSteps: number;
  /** The embedded part's chain row again, with the artifacts in memory: TDA without the disk. */
  withoutDisk?: ThroughputRow;
}

export interface PlatformOptions extends BenchPartOptions {
  /** Emulators already running (the smoke spec's); default: the part starts its own. */
  endpoints?: EmulatorEndpoints;
}

const CONCURRENCY = [1, 8, 32];
const HOP_CHAIN: Shape = { kind: 'chain', length: 5 };

export interface Sizes {
  concurrency: number[];
  hopRuns: (concurrency: number) => number;
  hopShape: Shape;
  floorOps: number;
  throughput: ThroughputSize[];
  /**
   * No-op steps a stack runs before its throughput rows. A fresh process's rate keeps rising
   * for its first ~15,000 steps (V8 tiering the stack's code up, the young generation growing:
   * windows of 3,000 steps went 1,850 → 2,300-2,600 steps/s on one stack), so an unwarmed window
   * measures the JIT more than TDA. The emulators' rows are bound by the emulators instead.
   */
  warmUpSteps: number;
}

interface ThroughputSize {
  shape: Shape;
  runs: number;
  concurrency: number;
}

const FULL: Sizes = {
  concurrency: CONCURRENCY,
  hopRuns: (c) => Math.max(20, c * 3),
  hopShape: HOP_CHAIN,
  floorOps: 200,
  throughput: [
    { shape: { kind: 'chain', length: 1 }, runs: 192, concurrency: 32 },
    { shape: { kind: 'chain', length: 10 }, runs: 64, concurrency: 32 },
    { shape: { kind: 'chain', length: 100 }, runs: 8, concurrency: 8 },
    { shape: { kind: 'fanout', width: 32 }, runs: 4, concurrency: 1 },
  ],
  warmUpSteps: 0,
};

const SMOKE: Sizes = {
  concurrency: [1, 2],
  hopRuns: () => 2,
  hopShape: { kind: 'chain', length: 3 },
  floorOps: 2,
  throughput: [
    { shape: { kind: 'chain', length: 1 }, runs: 2, concurrency: 1 },
    { shape: { kind: 'chain', length: 4 }, runs: 1, concurrency: 1 },
    { shape: { kind: 'fanout', width: 3 }, runs: 1, concurrency: 1 },
  ],
  warmUpSteps: 4,
};

const MEMORY: Sizes = {
  ...FULL,
  hopRuns: (c) => Math.max(40, c * 4),
  floorOps: 2_000,
  throughput: [
    { shape: { kind: 'chain', length: 1 }, runs: 2_000, concurrency: 32 },
    { shape: { kind: 'chain', length: 10 }, runs: 600, concurrency: 32 },
    { shape: { kind: 'chain', length: 100 }, runs: 24, concurrency: 8 },
    { shape: { kind: 'fanout', width: 32 }, runs: 30, concurrency: 1 },
  ],
  warmUpSteps: 20_000,
};

/** The floors on the emulators under test, in this run: Firestore, Pub/Sub, and the hop's. */
async function emulatorFloors(
  endpoints: EmulatorEndpoints,
  sizes: Sizes,
): Promise<Omit<PlatformFloors, 'artifacts'>> {
  const { firestore, pubsub } = floorClients(endpoints);
  try {
    const collection = `bench_floor_${Date.now().toString(36)}`;
    const floors: Omit<PlatformFloors, 'artifacts'> = {
      firestore: [],
      hop: [],
      pubsub: await pubsubFloor(pubsub, sizes.floorOps / 2, sizes.floorOps * 2),
    };
    for (const c of sizes.concurrency) {
      const perLoop = Math.max(2, Math.ceil(sizes.floorOps / c));
      floors.firestore.push(await firestoreFloor(firestore, collection, c, perLoop));
      floors.hop.push(
        await hopFloor(firestore, pubsub, c, Math.max(2, Math.ceil(sizes.floorOps / 2 / c))),
      );
    }
    return floors;
  } finally {
    await firestore.terminate();
    await pubsub.close();
  }
}

/** The first chain row's shape (a chain of 10: a step's full path), `sizes.warmUpSteps` of it. */
function warmUpRow(sizes: Sizes): ThroughputSize | undefined {
  return sizes.throughput.find((r) => r.shape.kind === 'chain' && r.shape.length > 1);
}

async function warmUp(platform: PlatformStack, sizes: Sizes): Promise<void> {
  const row = warmUpRow(sizes);
  if (row === undefined || sizes.warmUpSteps <= 0) return;
  const runs = Math.ceil(sizes.warmUpSteps / stepsOf(row.shape));
  await measureThroughput(platform, row.shape, runs, row.concurrency);
}

/** Hops at each concurrency, then the throughput shapes, on one running stack. */
export async function measurePlatform(
  platform: PlatformStack,
  sizes: Sizes,
): Promise<Pick<PlatformData, 'hops' | 'throughput' | 'marginalPerStep' | 'warmUpSteps'>> {
  // Warm-up: JIT, gRPC channels, the first subscription streams.
  await measureThroughput(platform, sizes.hopShape, 4, 2);
  const hops: HopRow[] = [];
  for (const c of sizes.concurrency) {
    hops.push(await measureHops(platform, sizes.hopShape, c, sizes.hopRuns(c)));
  }
  await warmUp(platform, sizes);
  const throughput: ThroughputRow[] = [];
  for (const row of sizes.throughput) {
    throughput.push(await measureThroughput(platform, row.shape, row.runs, row.concurrency));
  }
  const chains = throughput.filter((row) => row.shape.startsWith('chain'));
  const [short, long] = [chains[0], chains.at(-1)];
  return {
    hops,
    throughput,
    warmUpSteps: sizes.warmUpSteps,
    marginalPerStep:
      short !== undefined && long !== undefined && long !== short
        ? marginalPerStep(short, long)
        : {},
  };
}

/** `npm run bench -- platform`: TDA's own hops, throughput and cost on the emulators. */
export async function runPlatformBench(options: PlatformOptions): Promise<BenchPart> {
  const sizes = options.smoke ? SMOKE : FULL;
  const started =
    options.endpoints === undefined ? await startEmulators('bench-platform') : undefined;
  const endpoints: EmulatorEndpoints = options.endpoints ?? (started as EmulatorEndpoints);
  try {
    const floors = await emulatorFloors(endpoints, sizes);
    const platform = await startPlatformStack({
      backend: 'emulators',
      emulators: { ...endpoints, projectId: `${endpoints.projectId}-platform` },
    });
    try {
      const data: PlatformData = {
        machine: machine(),
        backend: `emulators (Firestore ${endpoints.firestoreHost}, Pub/Sub ${endpoints.pubsubHost})`,
        floors: { ...floors, artifacts: await artifactFloors(platform, sizes) },
        ...(await measurePlatform(platform, sizes)),
      };
      return { part: 'platform', markdown: renderPlatform(data), data };
    } finally {
      await platform.close();
    }
  } finally {
    await started?.stop();
  }
}

/**
 * The embedded backend's floors: its run store and bus, through their ports, on the stack's own
 * instances (a step-ready topic no worker of the stack reads).
 */
async function memoryFloors(platform: PlatformStack, sizes: Sizes): Promise<PlatformFloors> {
  const { store, broker } = platform.stack.backends;
  const firestore: FirestoreFloorRow[] = [];
  for (const c of sizes.concurrency) {
    firestore.push(await storeFloor(store, c, Math.max(2, Math.ceil(sizes.floorOps / c))));
  }
  const channel = {
    topic: stepReadyTopic('NEWS_EXPORT', platform.prefix),
    subscription: stepReadySubscription('NEWS_EXPORT', platform.prefix),
  };
  const { pubsub, hop } = await busAndHopFloors(store, broker, channel, {
    messages: sizes.floorOps / 2,
    burst: sizes.floorOps * 2,
    concurrency: sizes.concurrency,
  });
  return { firestore, pubsub, hop, artifacts: await artifactFloors(platform, sizes) };
}

/** The stack's artifact store, in its data dir, at each concurrency. */
async function artifactFloors(platform: PlatformStack, sizes: Sizes): Promise<ArtifactFloorRow[]> {
  const rows: ArtifactFloorRow[] = [];
  for (const c of sizes.concurrency) {
    const perLoop = Math.max(2, Math.ceil(sizes.floorOps / c));
    rows.push(await artifactFloor(platform.stack.backends.artifacts, c, perLoop));
  }
  return rows;
}

/**
 * The first chain row once more on a stack whose artifacts stay in memory: what TDA itself
 * costs per step, apart from the filesystem (whose floor is measured above).
 */
async function withoutDisk(sizes: Sizes): Promise<ThroughputRow | undefined> {
  const row = warmUpRow(sizes);
  if (row === undefined) return undefined;
  const platform = await startPlatformStack({ backend: 'memory', artifactsInMemory: true });
  try {
    await warmUp(platform, sizes);
    const measured = await measureThroughput(platform, row.shape, row.runs, row.concurrency);
    return { ...measured, shape: `${measured.shape}, ${IN_MEMORY}` };
  } finally {
    await platform.close();
  }
}

/** `npm run bench -- platform-memory`: the same figures on TDA_BACKEND=memory (no Java, no network). */
export async function runPlatformMemoryBench(options: BenchPartOptions): Promise<BenchPart> {
  const sizes = options.smoke ? SMOKE : MEMORY;
  const platform = await startPlatformStack({ backend: 'memory' });
  let data: PlatformData;
  try {
    const floors = await memoryFloors(platform, sizes);
    data = {
      machine: machine(),
      backend: 'memory (TDA_BACKEND=memory: in-process store and bus, local artifacts)',
      floors,
      ...(await measurePlatform(platform, sizes)),
    };
  } finally {
    await platform.close();
  }
  const diskless = await withoutDisk(sizes);
  if (diskless !== undefined) data.withoutDisk = diskless;
  return { part: 'platform-memory', markdown: renderPlatform(data), data };
}
