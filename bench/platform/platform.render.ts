import { describeMachine, fmt, markdownTable, type LatencyStats } from '../bench-kit';
import type { HopStats } from './hop-analysis';
import type { HopRow, ThroughputRow } from './platform-measure';
import type { PlatformData, PlatformFloors } from './platform.bench';

const ms = (value: number): string => value.toFixed(1);
const times = (value: number): string => `${value.toFixed(2)}×`;
/** Writes of the run document per step on the happy path: claim, finalize, advance. */
export const WRITES_PER_STEP = 3;
/** How the platform-memory part labels its chain row measured with the artifacts in memory. */
export const IN_MEMORY = 'artifacts in memory';

function floorTables(floors: PlatformFloors): string[] {
  const firestore = markdownTable(
    ['concurrency', 'p50 ms', 'p90 ms', 'p99 ms', 'ops/s'],
    floors.firestore.map((r) => [
      String(r.concurrency),
      ms(r.p50),
      ms(r.p90),
      ms(r.p99),
      fmt(r.opsPerSecond),
    ]),
  );
  const { latency, burst } = floors.pubsub;
  const pubsub = markdownTable(
    ['p50 ms', 'p90 ms', 'p99 ms', 'burst msg/s'],
    [[ms(latency.p50), ms(latency.p90), ms(latency.p99), fmt(burst.messagesPerSecond)]],
  );
  const hop = markdownTable(
    ['concurrency', 'hops', 'p50 ms', 'p90 ms', 'p99 ms'],
    floors.hop.map((r) => [String(r.concurrency), String(r.hops), ms(r.p50), ms(r.p90), ms(r.p99)]),
  );
  const artifacts = markdownTable(
    ['concurrency', 'p50 ms', 'p90 ms', 'p99 ms', 'ops/s', 'CPU µs/op'],
    floors.artifacts.map((r) => [
      String(r.concurrency),
      ms(r.p50),
      ms(r.p90),
      ms(r.p99),
      fmt(r.opsPerSecond),
      fmt(r.cpuMicrosPerOp),
    ]),
  );
  return [
    'Floors, measured first on the same backend. Run store (Firestore, or the in-memory store): get + update conditional on the read (one document per loop):',
    '',
    firestore,
    '',
    "Bus (Pub/Sub, or the in-memory bus): publish → delivered with TDA's client and settings, one at a time; then a burst:",
    '',
    pubsub,
    '',
    'Hop floor: publish → delivered → get → conditional update, with the same clients (one document per loop):',
    '',
    hop,
    '',
    "Artifact store (local files in the stack's data dir): a step's exists + create-only put of a small JSON object, ten to a directory:",
    '',
    artifacts,
  ];
}

function hopLine(
  name: string,
  hop: HopStats,
  floor: LatencyStats | undefined,
  c: number,
): string[] {
  const ratio = (a: number, b: number | undefined) =>
    b === undefined || b === 0 ? '–' : times(a / b);
  return [
    name,
    String(c),
    String(hop.samples),
    ms(hop.p50),
    ms(hop.p90),
    ms(hop.p99),
    floor === undefined ? '–' : ms(floor.p50),
    ratio(hop.p50, floor?.p50),
    ratio(hop.p99, floor?.p99),
  ];
}

function hopTables(rows: readonly HopRow[], floors: PlatformFloors): string[] {
  const lines: string[][] = [];
  for (const row of rows) {
    const hopFloor = floors.hop.find((f) => f.concurrency === row.concurrency);
    const writeFloor = floors.firestore.find((f) => f.concurrency === row.concurrency);
    lines.push(hopLine('dispatch', row.dispatch, hopFloor, row.concurrency));
    lines.push(hopLine('advance', row.advance, hopFloor, row.concurrency));
    lines.push(hopLine('finalize', row.finalize, writeFloor, row.concurrency));
  }
  const table = markdownTable(
    [
      'hop',
      'runs at once',
      'samples',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'floor p50 ms',
      'p50 / floor',
      'p99 / floor',
    ],
    lines,
  );
  const segments = rows.map((row) =>
    [
      `${row.concurrency} at once`,
      ...(['dispatch', 'advance', 'finalize'] as const).map(
        (hop) =>
          `${hop}: ${Object.entries(row[hop].segments)
            .map(([k, v]) => `${k} ${ms(v)}`)
            .join(', ')}`,
      ),
    ].join(' · '),
  );
  return [
    'Hops of no-op chains (READY committed → handler entered; handler done → SUCCEEDED committed; last dependency SUCCEEDED → next READY committed). Floor: the hop floor above at the same concurrency (finalize: the store floor). Targets at 8 runs: p50 ≤ 1.3×, p99 ≤ 2×.',
    '',
    table,
    '',
    'Where the time goes (p50 of each segment, ms):',
    '',
    ...segments.map((s) => `- ${s}`),
  ];
}

/** The floor row measured at the largest concurrency not above `inFlight` (else the lowest). */
function floorAt<R extends { concurrency: number }>(
  rows: readonly R[],
  inFlight: number,
): R | undefined {
  return (
    rows.reduce<R | undefined>(
      (best, row) =>
        row.concurrency <= inFlight && (best === undefined || row.concurrency > best.concurrency)
          ? row
          : best,
      undefined,
    ) ?? rows[0]
  );
}

const steps = (r: ThroughputRow): number => r.runs * r.stepsPerRun;

function throughputTable(data: PlatformData, cores: number): string[] {
  const { floors } = data;
  const rows = [...data.throughput, ...(data.withoutDisk === undefined ? [] : [data.withoutDisk])];
  const table = markdownTable(
    [
      'flow',
      'runs × at once',
      'steps/s',
      'runs/s',
      'store floor ops/s',
      `steps/s × ${WRITES_PER_STEP} / floor`,
      'claimed once',
      'conflicts',
      'writes/s one doc (peak, mean)',
      'CPU ms/step (event loop, process, machine)',
      'machine busy',
    ],
    rows.map((r) => {
      const floor = floorAt(floors.firestore, r.concurrency * r.parallelSteps);
      return [
        r.shape,
        `${r.runs} × ${r.concurrency}`,
        fmt(r.stepsPerSecond),
        fmt(r.runsPerSecond),
        floor === undefined ? '–' : fmt(floor.opsPerSecond),
        floor === undefined
          ? '–'
          : times((r.stepsPerSecond * WRITES_PER_STEP) / floor.opsPerSecond),
        `${r.runsClaimedOnce}/${r.runs}`,
        String(r.counts.conflicts),
        `${r.documentWrites.peakPerSecond}, ${fmt(r.documentWrites.meanPerSecond)}`,
        [r.cpu.mainThreadSeconds, r.cpu.processSeconds, r.cpu.machineSeconds]
          .map((seconds) => ms((seconds * 1000) / steps(r)))
          .join(', '),
        `${Math.round((100 * r.cpu.machineSeconds) / (r.cpu.wallSeconds * cores))} %`,
      ];
    }),
  );
  const warmedUp =
    data.warmUpSteps > 0
      ? `; each stack ran ${fmt(data.warmUpSteps)} no-op steps first, to measure it warm`
      : '';
  return [
    `Throughput with no-op workers (floor: the store floor at the number of steps in flight; one step = ${WRITES_PER_STEP} conditional writes; target ≥ 0.7× on the emulators, ≥ 2,000 steps/s in memory${warmedUp}):`,
    '',
    table,
  ];
}

/**
 * What the embedded backend's floors allow a chain step — 3 get + conditional update, 2
 * messages, 1 artifact exists + put, one after another — next to what TDA did, with and without
 * the disk. Only for the embedded part (the emulators' limit is their latency: README).
 */
function backendAllows(data: PlatformData): string[] {
  const diskless = data.withoutDisk;
  const chain = data.throughput.find((r) => diskless?.shape === `${r.shape}, ${IN_MEMORY}`);
  if (diskless === undefined || chain === undefined) return [];
  const inFlight = chain.concurrency * chain.parallelSteps;
  const store = floorAt(data.floors.firestore, inFlight);
  const artifact = floorAt(data.floors.artifacts, inFlight);
  const busPerSecond = data.floors.pubsub.burst.messagesPerSecond;
  if (store === undefined || artifact === undefined) return [];
  const allowed = 1 / (3 / store.opsPerSecond + 2 / busPerSecond + 1 / artifact.opsPerSecond);
  const withoutFiles = 1 / (3 / store.opsPerSecond + 2 / busPerSecond);
  return [
    '',
    `What the backend allows a ${chain.shape} step at ${inFlight} at once, from its floors: 3 get + update (${fmt(store.opsPerSecond)}/s), 2 messages (${fmt(busPerSecond)}/s) and 1 artifact exists + put (${fmt(artifact.opsPerSecond)}/s) → ${fmt(allowed)} steps/s; TDA did ${fmt(chain.stepsPerSecond)} (${times(chain.stepsPerSecond / allowed)}). With the artifacts in memory the store and bus allow ${fmt(withoutFiles)} steps/s; TDA did ${fmt(diskless.stepsPerSecond)}, ${ms((diskless.cpu.mainThreadSeconds * 1000) / steps(diskless))} ms CPU per step on its event loop.`,
  ];
}

function costTable(data: PlatformData): string[] {
  const row = (name: string, c: Record<string, number>): string[] => [
    name,
    ...['reads', 'writes', 'messages', 'queries', 'conflicts'].map((k) => (c[k] ?? 0).toFixed(2)),
  ];
  const rows = data.throughput.map((r) => row(`${r.shape} (all calls / steps)`, r.perStep));
  if (Object.keys(data.marginalPerStep).length > 0)
    rows.push(row('one more step (marginal)', data.marginalPerStep));
  return [
    'Cost per step, counted at the adapters (orchestrator and worker; the trigger included in "all calls"). Budget: ≤ 4 reads, ≤ 3 writes, 2 messages:',
    '',
    markdownTable(['flow', 'reads', 'writes', 'messages', 'queries', 'conflicts'], rows),
  ];
}

export function renderPlatform(data: PlatformData): string {
  return [
    `### platform: ${data.backend}`,
    '',
    describeMachine(data.machine),
    '',
    ...floorTables(data.floors),
    '',
    ...hopTables(data.hops, data.floors),
    '',
    ...throughputTable(data, data.machine.cores),
    ...backendAllows(data),
    '',
    ...costTable(data),
  ].join('\n');
}
