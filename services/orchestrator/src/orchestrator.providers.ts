import type { Provider } from '@nestjs/common';
import { flowCatalogue } from '@tda/flow-engine';
import { BundledCandleSource } from '@tda/market-data';
import { createMetrics } from '@tda/observability';
import { ORCHESTRATOR_SERVICE } from './config';
import type { OrchestratorModuleOptions } from './orchestrator.options';
import {
  ARTIFACT_STORE,
  CLOCK,
  FLOW_CATALOGUE,
  LOGGER,
  MARKET_COVERAGE,
  MESSAGE_BROKER,
  METRICS,
  ORCHESTRATOR_CONFIG,
  RANDOM,
  REPORT_INDEX,
  RUN_STORE,
  type Clock,
  type RandomSource,
} from './orchestrator.tokens';

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
      provide: METRICS,
      useValue: options.metrics ?? createMetrics({ service: ORCHESTRATOR_SERVICE }),
    },
  ];
}
