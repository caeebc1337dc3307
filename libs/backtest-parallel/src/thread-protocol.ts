import type {
  BaseScore,
  CandleArrays,
  GridRequest,
  Progress,
  StageBResult,
  UnitRange,
  VariantScore,
} from '@tda/backtest';
import type { ErrorInfo } from '@tda/contracts';

/** workerData.role of a stage-B thread: how a re-entered bundle knows it is one. */
export const STAGE_B_THREAD_ROLE = 'backtest-stage-b';

/** The workerData of a stage-B thread (the jobs come later, as messages). */
export interface StageBThreadData {
  role: typeof STAGE_B_THREAD_ROLE;
}

/** What every thread receives once per job. */
export interface StageBJob {
  /** Columns backed by SharedArrayBuffers: every thread reads the same memory, nothing copied. */
  candles: CandleArrays;
  request: GridRequest;
  shortlist: BaseScore[];
  batchSize: number;
  topKPersistedDefault: number | undefined;
  /** Int32Array over a SharedArrayBuffer: [0] = 1 once the job is cancelled. */
  cancelFlag: Int32Array;
}

/** Pool → thread. */
export type ToThread =
  { type: 'job'; job: StageBJob } | { type: 'shard'; shard: number; units: UnitRange };

/** Thread → pool. */
export type FromThread =
  | { type: 'ready' }
  | { type: 'batch'; shard: number; progress: Progress; top: VariantScore[] }
  | { type: 'shard-done'; shard: number; result: StageBResult }
  | { type: 'error'; error: ErrorInfo };

/** Copies the candle columns into SharedArrayBuffers once per job (threads share, never copy). */
export function sharedCandles(candles: CandleArrays): CandleArrays {
  const share = (column: Float64Array): Float64Array => {
    const shared = new Float64Array(new SharedArrayBuffer(column.byteLength));
    shared.set(column);
    return shared;
  };
  return {
    length: candles.length,
    barMs: candles.barMs,
    openTime: share(candles.openTime),
    open: share(candles.open),
    high: share(candles.high),
    low: share(candles.low),
    close: share(candles.close),
    volume: share(candles.volume),
  };
}
