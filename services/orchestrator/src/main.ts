import 'reflect-metadata';
import { createBackends } from '@tda/backends';
import { createConfiguredCandleSource } from '@tda/market-data';
import { createLogger, logEvent } from '@tda/observability';
import { runServiceMain } from '@tda/service-runtime';
import { loadOrchestratorConfig, ORCHESTRATOR_SERVICE } from './config';
import { createOrchestratorApp } from './orchestrator.app';

/**
 * Standalone boot: `TDA_API_TOKEN=... node -r @swc-node/register services/orchestrator/src/main.ts`.
 * The same main-process rules as every service (config_invalid / service_failed on a bad boot,
 * one close on SIGTERM or SIGINT), from worker-kit's runServiceMain.
 */
void runServiceMain({
  service: ORCHESTRATOR_SERVICE,
  boot: async () => {
    const config = loadOrchestratorConfig();
    const logger = createLogger({
      service: ORCHESTRATOR_SERVICE,
      level: config.TDA_LOG_LEVEL,
      projectId: config.GOOGLE_CLOUD_PROJECT,
    });
    const backends = await createBackends(config);
    try {
      const app = await createOrchestratorApp({
        store: backends.store,
        broker: backends.broker,
        artifacts: backends.artifacts,
        reportIndex: backends.reportIndex,
        accounts: backends.accounts,
        identities: backends.identities,
        schedules: backends.schedules,
        signals: backends.signals,
        evaluations: backends.evaluations,
        logger,
        config,
        marketData: await createConfiguredCandleSource(config),
      });
      await app.startAllMicroservices();
      await app.listen(config.PORT);
      logEvent(logger, 'info', 'service_started', {
        port: config.PORT,
        backend: backends.describe(),
        pubsubPrefix: config.TDA_PUBSUB_PREFIX,
        reconcileIntervalMs: config.TDA_RECONCILE_INTERVAL_MS,
      });
      return {
        logger,
        close: async () => {
          await app.close(); // drains the step-event consumer, stops the reconciler
          await backends.close();
        },
      };
    } catch (error) {
      await backends.close();
      throw error;
    }
  },
});
