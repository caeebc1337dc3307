import type { Provider } from '@nestjs/common';
import { flowCatalogue } from '@tda/flow-engine';
import type { RunChangeFeed } from '@tda/flow-store';
import { BundledCandleSource } from '@tda/market-data';
import { createMetrics } from '@tda/observability';
import { ORCHESTRATOR_SERVICE } from './config';
import type { OrchestratorModuleOptions } from './orchestrator.options';
import {
  ARTIFACT_STORE,
  CLOCK,
  FLOW_CATALOGUE,
  HTTP_DRAIN_MS,
  LOGGER,
  MARKET_COVERAGE,
  MESSAGE_BROKER,
  METRICS,
  ORCHESTRATOR_CONFIG,
  RANDOM,
  REPORT_INDEX,
  RUN_CHANGE_FEED,
  RUN_STORE,
  type Clock,
  type RandomSource,
} from './orchestrator.tokens';

/** Both store adapters are also change feeds; a test double may not be. */
function isRunChangeFeed(store: object): store is RunChangeFeed {
  return (
    'watchRun' in store &&
    typeof store.watchRun === 'function' &&
    'watchOwner' in store &&
    typeof store.watchOwner === 'function'
  );
}

/** What app.close() gives HTTP requests in progress, within Cloud Run's 10 s after SIGTERM. */
export const DEFAULT_HTTP_DRAIN_MS = 5_000;

const systemClock: Clock = () => new Date();
const mathRandom: RandomSource = () => Math.random();

/** The collaborators from the module options, one provider per token, defaults filled in. */
export function collaboratorProviders(options: OrchestratorModuleOptions): Provider[] {
  return [
    { provide: RUN_STORE, useValue: options.store },
    { provide: MESSAGE_BROKER, useValue: options.broker },
    { provide: ARTIFACT_STORE, useValue: options.artifacts },
    { provide: REPORT_INDEX, useValue: options.reportIndex },
    { provide: LOGGER, useValue: options.logger },
    { provide: CLOCK, useValue: options.clock ?? systemClock },
    { provide: RANDOM, useValue: options.random ?? mathRandom },
    { provide: ORCHESTRATOR_CONFIG, useValue: options.config },
    { provide: FLOW_CATALOGUE, useValue: options.catalogue ?? flowCatalogue },
    { provide: MARKET_COVERAGE, useValue: options.marketData ?? new BundledCandleSource() },
    {
      provide: RUN_CHANGE_FEED,
      useValue: options.changeFeed ?? (isRunChangeFeed(options.store) ? options.store : null),
    },
    {
      provide: METRICS,
      useValue: options.metrics ?? createMetrics({ service: ORCHESTRATOR_SERVICE }),
    },
    { provide: HTTP_DRAIN_MS, useValue: options.httpDrainMs ?? DEFAULT_HTTP_DRAIN_MS },
  ];
}
