import type { FlowRun } from '@tda/contracts';
import { withCpu, type CpuUse } from '../bench-kit';
import {
  countCalls,
  documentWriteRate,
  perStep,
  type CallCounts,
  type DocumentWriteRate,
} from './cost';
import { hopSamples, hopStats, type HopStats } from './hop-analysis';
import { CHAIN_FLOW_KEY, FANOUT_FLOW_KEY } from './noop-flows';
import type { PlatformStack } from './platform-stack';
import type { BatchResult } from './run-driver';

const SYMBOL = 'BTC-USDT';
/** A fixed asOf inside the bundled candles: every trigger resolves the same scope. */
const AS_OF = '2026-09-01T00:00:00Z';

/** A flow shape of the bench: a chain of `length` steps, or `width` parallel steps and a join. */
export type Shape = { kind: 'chain'; length: number } | { kind: 'fanout'; width: number };

export const shapeName = (shape: Shape): string =>
  shape.kind === 'chain' ? `chain of ${shape.length}` : `fan-out ${shape.width} + join`;

export const stepsOf = (shape: Shape): number =>
  shape.kind === 'chain' ? shape.length : shape.width + 1;

function request(shape: Shape) {
  return shape.kind === 'chain'
    ? { flowKey: CHAIN_FLOW_KEY, scope: { symbol: SYMBOL, asOf: AS_OF, length: shape.length } }
    : { flowKey: FANOUT_FLOW_KEY, scope: { symbol: SYMBOL, asOf: AS_OF, width: shape.width } };
}

/** The runs as stored (read through the unrecorded store, after the measurement). */
async function storedRuns(platform: PlatformStack, runIds: readonly string[]): Promise<FlowRun[]> {
  const runs = await Promise.all(runIds.map((id) => platform.stack.backends.store.get(id)));
  return runs.flatMap((r) => (r === null ? [] : [r.run]));
}

/** A batch with a clean call log and handler clock: its figures are its own. */
async function measuredBatch(
  platform: PlatformStack,
  shape: Shape,
  runs: number,
  concurrency: number,
): Promise<{ batch: BatchResult; runs: FlowRun[]; cpu: CpuUse }> {
  platform.log.clear();
  platform.handlers.clear();
  const { result: batch, cpu } = await withCpu(() =>
    platform.driver.runBatch(request(shape), runs, concurrency),
  );
  return { batch, runs: await storedRuns(platform, batch.runIds), cpu };
}

export interface HopRow {
  concurrency: number;
  runs: number;
  dispatch: HopStats;
  advance: HopStats;
  finalize: HopStats;
}

/** Dispatch, finalize and advance of chains, `concurrency` runs at a time. */
export async function measureHops(
  platform: PlatformStack,
  shape: Shape,
  concurrency: number,
  runs: number,
): Promise<HopRow> {
  const measured = await measuredBatch(platform, shape, runs, concurrency);
  const hops = hopSamples(measured.runs, platform.log, platform.handlers);
  return {
    concurrency,
    runs,
    dispatch: hopStats(hops.dispatch),
    advance: hopStats(hops.advance),
    finalize: hopStats(hops.finalize),
  };
}

export interface ThroughputRow {
  shape: string;
  stepsPerRun: number;
  /** Steps of one run that can be in flight at once (a chain 1, a fan-out its width). */
  parallelSteps: number;
  runs: number;
  concurrency: number;
  seconds: number;
  stepsPerSecond: number;
  runsPerSecond: number;
  outcomes: Record<string, number>;
  /** Runs whose every step was claimed exactly once and SUCCEEDED. */
  runsClaimedOnce: number;
  counts: CallCounts;
  perStep: Record<string, number>;
  documentWrites: DocumentWriteRate;
  cpu: CpuUse;
}

/** Steps each run's steps were claimed (committed READY → RUNNING) and how many ended SUCCEEDED. */
function claimedOnce(runs: readonly FlowRun[], platform: PlatformStack): number {
  const claims = new Map<string, number>();
  for (const call of platform.log.store) {
    if (call.op !== 'update' || !call.ok || call.patch === undefined) continue;
    for (const [path, value] of Object.entries(call.patch)) {
      if (value === 'RUNNING' && path.endsWith('.status') && path.startsWith('steps.')) {
        const id = `${call.runId}/${path.slice(6, -7)}`;
        claims.set(id, (claims.get(id) ?? 0) + 1);
      }
    }
  }
  return runs.filter((run) =>
    Object.entries(run.steps).every(
      ([stepId, step]) => step.status === 'SUCCEEDED' && claims.get(`${run.runId}/${stepId}`) === 1,
    ),
  ).length;
}

/** `runs` runs of `shape`, `concurrency` at a time: rates, outcome checks, counted calls. */
export async function measureThroughput(
  platform: PlatformStack,
  shape: Shape,
  runs: number,
  concurrency: number,
): Promise<ThroughputRow> {
  const measured = await measuredBatch(platform, shape, runs, concurrency);
  const steps = stepsOf(shape) * runs;
  const counts = countCalls(platform.log);
  return {
    shape: shapeName(shape),
    stepsPerRun: stepsOf(shape),
    parallelSteps: shape.kind === 'chain' ? 1 : shape.width,
    runs,
    concurrency,
    seconds: measured.batch.seconds,
    stepsPerSecond: steps / measured.batch.seconds,
    runsPerSecond: runs / measured.batch.seconds,
    outcomes: measured.batch.outcomes,
    runsClaimedOnce: claimedOnce(measured.runs, platform),
    counts,
    perStep: perStep(counts, steps),
    documentWrites: documentWriteRate(platform.log),
    cpu: measured.cpu,
  };
}

/**
 * What one more step costs, whatever the run's own overhead: the difference between two chain
 * rows per run, divided by the difference in steps.
 */
export function marginalPerStep(short: ThroughputRow, long: ThroughputRow): Record<string, number> {
  const a = perStep(short.counts, short.runs);
  const b = perStep(long.counts, long.runs);
  const extra = long.stepsPerRun - short.stepsPerRun;
  return Object.fromEntries(
    Object.entries(b).map(([name, value]) => [name, (value - (a[name] ?? 0)) / extra]),
  );
}
