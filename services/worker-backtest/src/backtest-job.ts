import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  finalize,
  IndicatorCache,
  stageASteps,
  stageBSteps,
  type BaseScore,
  type CandleArrays,
  type FinalVariant,
  type GridRequest,
  type Progress,
  type VariantScore,
} from '@tda/backtest';
import { runStageBParallel } from '@tda/backtest-parallel';
import { SnapshotCadence, type SnapshotCadenceSettings } from './snapshot-cadence';

export type BacktestStage = 'stage_a' | 'stage_b' | 'finalizing';

/** What the job reports to (the handler maps it to ctx.heartbeat / ctx.checkpoint / ctx.signal). */
export interface JobReporter {
  progress(stage: BacktestStage, progress: Progress): void;
  /** A fenced best-so-far write; rejections are the reporter's to log (never the job's). */
  snapshot(stage: BacktestStage, progress: Progress, top: VariantScore[]): Promise<void>;
  /** Cancel, lease loss or deadline: the job stops at the next batch boundary. */
  aborted(): boolean;
  now(): number;
}

export interface JobSettings extends SnapshotCadenceSettings {
  batchSize: number;
  parallelWorkers: number;
  topKPersistedDefault: number;
}

export type JobOutcome =
  | { kind: 'completed'; shortlist: number; stageBUnits: number; top: FinalVariant[] }
  | { kind: 'aborted'; stage: BacktestStage };

/**
 * Snapshots at the cadence, written one after the other without holding up the job; a forced one
 * (a stage's end) waits for the one in flight instead of being skipped. `drain` waits for all.
 */
class Snapshots {
  private readonly cadence: SnapshotCadence;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    settings: SnapshotCadenceSettings,
    private readonly reporter: JobReporter,
  ) {
    this.cadence = new SnapshotCadence(settings, () => reporter.now());
  }

  offer(stage: BacktestStage, progress: Progress, top: () => VariantScore[], force = false): void {
    if (!force && !this.cadence.due(progress.processed)) return;
    this.cadence.started(progress.processed);
    const at = { ...progress };
    const best = top();
    this.pending = this.pending
      .then(() => this.reporter.snapshot(stage, at, best))
      .finally(() => this.cadence.finished());
  }

  drain(): Promise<void> {
    return this.pending;
  }
}

/**
 * One backtest job (seed 003 staged batching): stage A shortlist, stage B with a running top-K,
 * finalizing with the detailed scorer. Between batches it yields to the event loop (heartbeats,
 * snapshot writes) and stops at the first boundary after an abort.
 */
export async function runBacktestJob(
  candles: CandleArrays,
  grid: GridRequest,
  settings: JobSettings,
  reporter: JobReporter,
): Promise<JobOutcome> {
  const cache = new IndicatorCache(candles);
  const snapshots = new Snapshots(settings, reporter);
  const shortlist = await stageA(candles, grid, cache, settings, reporter);
  if (shortlist === undefined) return { kind: 'aborted', stage: 'stage_a' };
  snapshots.offer('stage_b', { processed: 0, total: 0 }, () => [], true);
  const stageB = await runStageBCooperatively(candles, grid, shortlist, cache, settings, {
    reporter,
    snapshots,
  });
  await snapshots.drain();
  if (stageB === undefined) return { kind: 'aborted', stage: 'stage_b' };
  reporter.progress('finalizing', { processed: 0, total: 1 });
  await nextTurn();
  if (reporter.aborted()) return { kind: 'aborted', stage: 'finalizing' };
  const top = finalize(candles, grid, stageB.top, { cache });
  reporter.progress('finalizing', { processed: 1, total: 1 });
  return { kind: 'completed', shortlist: shortlist.length, stageBUnits: stageB.units, top };
}

async function stageA(
  candles: CandleArrays,
  grid: GridRequest,
  cache: IndicatorCache,
  settings: JobSettings,
  reporter: JobReporter,
): Promise<BaseScore[] | undefined> {
  const steps = stageASteps(candles, grid, { cache, batchSize: settings.batchSize });
  for (let next = steps.next(); ; next = steps.next()) {
    if (next.done === true) return next.value;
    reporter.progress('stage_a', next.value.progress);
    await nextTurn();
    if (reporter.aborted()) return undefined;
  }
}

interface StageBOutput {
  top: VariantScore[];
  units: number;
}

async function runStageBCooperatively(
  candles: CandleArrays,
  grid: GridRequest,
  shortlist: BaseScore[],
  cache: IndicatorCache,
  settings: JobSettings,
  io: { reporter: JobReporter; snapshots: Snapshots },
): Promise<StageBOutput | undefined> {
  const { reporter, snapshots } = io;
  const options = {
    cache,
    batchSize: settings.batchSize,
    topKPersistedDefault: settings.topKPersistedDefault,
  };
  if (settings.parallelWorkers > 1) {
    const result = await runStageBParallel(candles, grid, shortlist, {
      ...options,
      workers: settings.parallelWorkers,
      onBatch: (progress, best) => {
        reporter.progress('stage_b', progress);
        snapshots.offer('stage_b', progress, () => best, progress.processed === progress.total);
      },
      isCancelled: () => reporter.aborted(),
    });
    if (result.status === 'cancelled') return undefined;
    return { top: result.top, units: result.progress.total };
  }
  const steps = stageBSteps(candles, grid, shortlist, options);
  let units = 0;
  for (let next = steps.next(); ; next = steps.next()) {
    if (next.done === true) return { top: next.value, units };
    const { progress } = next.value;
    units = progress.total;
    reporter.progress('stage_b', progress);
    snapshots.offer('stage_b', progress, next.value.top, progress.processed === progress.total);
    await nextTurn();
    if (reporter.aborted()) return undefined;
  }
}
