export * from './backtest-parallel.errors';
export * from './merge';
export * from './spawn';
export type { StageBRunOptions } from './stage-b-job';
export * from './stage-b-pool';
export { runBacktestThreadIfWorker, serveStageB } from './stage-b.thread';
export { STAGE_B_THREAD_ROLE, sharedCandles, type StageBThreadData } from './thread-protocol';
