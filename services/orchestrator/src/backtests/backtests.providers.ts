import type { Provider } from '@nestjs/common';
import type { StepCheckpointStore } from '@tda/flow-store';
import type { OrchestratorModuleOptions } from '../orchestrator.options';
import { BacktestJobsService } from './backtest-jobs.service';
import { CHECKPOINT_STORE } from './backtests.tokens';

/** Both run store adapters also keep step checkpoints; a test double may not. */
function isCheckpointStore(store: object): store is StepCheckpointStore {
  return 'readCheckpoint' in store && typeof store.readCheckpoint === 'function';
}

/** Backtest jobs (seed 003): the checkpoint store the best-so-far is read from, the service. */
export function backtestProviders(options: OrchestratorModuleOptions): Provider[] {
  const checkpoints =
    options.checkpoints ?? (isCheckpointStore(options.store) ? options.store : null);
  return [{ provide: CHECKPOINT_STORE, useValue: checkpoints }, BacktestJobsService];
}
