import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { flowCatalogue } from '@tda/flow-engine';
import { createMetrics } from '@tda/observability';
import { GoogleIdTokenVerifier, type IdTokenVerifier } from '@tda/service-runtime';
import { ORCHESTRATOR_SERVICE, type OrchestratorConfig } from './config';
import { RunAdvancer } from './dispatch/run-advancer.service';
import { StepDispatcher } from './dispatch/step-dispatcher.service';
import { AdminReconcileController } from './http/admin-reconcile.controller';
import { AdminReplayController } from './http/admin-replay.controller';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { BearerTokenGuard } from './http/bearer-token.guard';
import { FlowsController } from './http/flows.controller';
import { HealthController } from './http/health.controller';
import { MetricsController } from './http/metrics.controller';
import { OpenApiController } from './http/openapi.controller';
import { RunsController } from './http/runs.controller';
import { RunsRecoveryController } from './http/runs-recovery.controller';
import {
  ORCHESTRATOR_CONTEXT,
  type OrchestratorContext,
  type OrchestratorModuleOptions,
} from './orchestrator.options';
import { Reconciler } from './reconcile/reconciler.service';
import { ReplayService } from './recovery/replay.service';
import { RunRecoveryService } from './recovery/run-recovery.service';
import { RunAdmission } from './runs/run-admission.service';
import { RunsService } from './runs/runs.service';
import { StepArtifactService } from './runs/step-artifact.service';
import { StepEventsHandler } from './step-events/step-events.handler';

/**
 * The orchestrator (DESIGN §3-§5): admin HTTP API, step-event consumer, dispatch and reconciler.
 * Takes built adapters (forRoot) so the same module runs standalone (main.ts), inside the local
 * launcher and in tests with in-memory adapters.
 */
function adminOidcVerifierFor(config: OrchestratorConfig): IdTokenVerifier | undefined {
  const audience = config.TDA_ADMIN_OIDC_AUDIENCE;
  const serviceAccountEmail = config.TDA_ADMIN_OIDC_SERVICE_ACCOUNT;
  if (audience === undefined || serviceAccountEmail === undefined) return undefined;
  return new GoogleIdTokenVerifier({ audience, serviceAccountEmail });
}

@Module({})
export class OrchestratorModule {
  static forRoot(options: OrchestratorModuleOptions): DynamicModule {
    const context: OrchestratorContext = {
      store: options.store,
      broker: options.broker,
      artifacts: options.artifacts,
      logger: options.logger,
      clock: options.clock ?? (() => new Date()),
      random: options.random ?? Math.random,
      config: options.config,
      catalogue: options.catalogue ?? flowCatalogue,
      metrics: options.metrics ?? createMetrics({ service: ORCHESTRATOR_SERVICE }),
      adminOidcVerifier: options.adminOidcVerifier ?? adminOidcVerifierFor(options.config),
    };
    return {
      module: OrchestratorModule,
      controllers: [
        RunsController,
        FlowsController,
        HealthController,
        OpenApiController,
        MetricsController,
        StepEventsHandler,
        AdminReconcileController,
        RunsRecoveryController,
        AdminReplayController,
      ],
      providers: [
        { provide: ORCHESTRATOR_CONTEXT, useValue: context },
        StepDispatcher,
        RunAdvancer,
        RunAdmission,
        RunsService,
        StepArtifactService,
        Reconciler,
        RunRecoveryService,
        ReplayService,
        { provide: APP_GUARD, useClass: BearerTokenGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
      exports: [Reconciler, RunsService, RunAdvancer, RunAdmission],
    };
  }
}
