import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { accountProviders } from './accounts/accounts.providers';
import { AuthGuard } from './auth/auth.guard';
import { authProviders } from './auth/auth.providers';
import { IdentityAdminController, MeController } from './auth/identity.controller';
import { assertEveryRouteDecided } from './auth/route-access';
import { AccountsService } from './accounts/accounts.service';
import { RunWriter } from './dispatch/run-writer.service';
import { StepDispatcher } from './dispatch/step-dispatcher.service';
import { AccountsController } from './http/accounts.controller';
import { AdminReconcileController } from './http/admin-reconcile.controller';
import { AdminReplayController } from './http/admin-replay.controller';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { FlowsController } from './http/flows.controller';
import { HealthController } from './http/health.controller';
import {
  AdminIndexController,
  RecommendationsController,
  ReportsController,
} from './http/index.controller';
import { MetricsController } from './http/metrics.controller';
import { OpenApiController } from './http/openapi.controller';
import { RunsController } from './http/runs.controller';
import { RunsRecoveryController } from './http/runs-recovery.controller';
import type { OrchestratorModuleOptions } from './orchestrator.options';
import { collaboratorProviders } from './orchestrator.providers';
import { IndexBackfill } from './index/index-backfill.service';
import { IndexQueries } from './index/index-queries.service';
import { IndexWriter } from './index/index-writer.service';
import { Reconciler } from './reconcile/reconciler.service';
import { ReplayService } from './recovery/replay.service';
import { RunRecoveryService } from './recovery/run-recovery.service';
import { IdempotencyKeys } from './runs/idempotency-keys.service';
import { RunAdmission } from './runs/run-admission.service';
import { RunPreflight } from './runs/run-preflight.service';
import { RunTrigger } from './runs/run-trigger.service';
import { RunsService } from './runs/runs.service';
import { StepArtifactService } from './runs/step-artifact.service';
import { StepEventsHandler } from './step-events/step-events.handler';
import { EventsController } from './events/events.controller';
import { EventStreams } from './events/event-streams.service';
import { HttpDrain } from './http/http-drain.service';
import { AdminSchedulesController } from './schedules/admin-schedules.controller';
import { SchedulesController } from './schedules/schedules.controller';
import { scheduleProviders } from './schedules/schedules.providers';
import { SignalsController } from './schedules/signals.controller';
import { BacktestJobsController } from './backtests/backtest-jobs.controller';
import { backtestProviders } from './backtests/backtests.providers';
import { EvaluationsController } from './evaluations/evaluations.controller';
import { evaluationProviders } from './evaluations/evaluations.providers';

/** Every controller; each HTTP route carries an @Access decision (checked at boot). */
export const ORCHESTRATOR_CONTROLLERS = [
  RunsController,
  FlowsController,
  HealthController,
  OpenApiController,
  MetricsController,
  StepEventsHandler,
  AdminReconcileController,
  RunsRecoveryController,
  AdminReplayController,
  AccountsController,
  ReportsController,
  RecommendationsController,
  AdminIndexController,
  MeController,
  IdentityAdminController,
  EventsController,
  SchedulesController,
  SignalsController,
  AdminSchedulesController,
  BacktestJobsController,
  EvaluationsController,
];

/** The controllers this configuration mounts (seed 003: a disabled jobs API is not mounted). */
function mountedControllers(options: OrchestratorModuleOptions): typeof ORCHESTRATOR_CONTROLLERS {
  return ORCHESTRATOR_CONTROLLERS.filter(
    (c) => c !== BacktestJobsController || options.config.TDA_BACKTEST_JOBS_ENABLED,
  );
}

/**
 * The orchestrator (DESIGN §3-§5): admin HTTP API, step-event consumer, dispatch and reconciler.
 * Takes built adapters (forRoot) so the same module runs standalone (main.ts), inside the local
 * launcher and in tests with in-memory adapters; each becomes its own provider
 * (orchestrator.tokens.ts) and every service injects only the ones it uses.
 */
@Module({})
export class OrchestratorModule {
  static forRoot(options: OrchestratorModuleOptions): DynamicModule {
    assertEveryRouteDecided(ORCHESTRATOR_CONTROLLERS);
    return {
      module: OrchestratorModule,
      controllers: mountedControllers(options),
      providers: [
        ...collaboratorProviders(options),
        ...accountProviders(options),
        ...authProviders(options),
        ...scheduleProviders(options),
        ...backtestProviders(options),
        ...evaluationProviders(options),
        StepDispatcher,
        RunWriter,
        IdempotencyKeys,
        RunAdmission,
        RunPreflight,
        RunTrigger,
        RunsService,
        StepArtifactService,
        Reconciler,
        RunRecoveryService,
        ReplayService,
        IndexWriter,
        IndexBackfill,
        IndexQueries,
        EventStreams,
        HttpDrain,
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
      exports: [Reconciler, RunsService, RunTrigger, RunWriter, RunAdmission, AccountsService],
    };
  }
}
