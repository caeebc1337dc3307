import type { Provider } from '@nestjs/common';
import { flowCatalogue } from '@tda/flow-engine';
import { BundledCandleSource } from '@tda/market-data';
import { createMetrics } from '@tda/observability';
import { GoogleIdTokenVerifier, type IdTokenVerifier } from '@tda/service-runtime';
import { ORCHESTRATOR_SERVICE, type OrchestratorConfig } from './config';
import type { OrchestratorModuleOptions } from './orchestrator.options';
import {
  ADMIN_ID_TOKEN_VERIFIER,
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

function adminOidcVerifierFor(config: OrchestratorConfig): IdTokenVerifier | null {
  const audience = config.TDA_ADMIN_OIDC_AUDIENCE;
  const serviceAccountEmail = config.TDA_ADMIN_OIDC_SERVICE_ACCOUNT;
  if (audience === undefined || serviceAccountEmail === undefined) return null;
  return new GoogleIdTokenVerifier({ audience, serviceAccountEmail });
}

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
    {
      provide: ADMIN_ID_TOKEN_VERIFIER,
      // null, not undefined: Nest does not treat `useValue: undefined` as a value provider.
      useValue: options.adminOidcVerifier ?? adminOidcVerifierFor(options.config),
    },
  ];
}
