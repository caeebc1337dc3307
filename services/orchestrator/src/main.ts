import 'reflect-metadata';
import { createBackends } from '@tda/backends';
import { ConfigError } from '@tda/config';
import { createLogger, describeError, logEvent } from '@tda/observability';
import { loadOrchestratorConfig, ORCHESTRATOR_SERVICE } from './config';
import { createOrchestratorApp } from './orchestrator.app';

/** Standalone boot: `TDA_API_TOKEN=... node -r @swc-node/register services/orchestrator/src/main.ts`. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadOrchestratorConfig();
  } catch (error) {
    const logger = createLogger({ service: ORCHESTRATOR_SERVICE });
    if (error instanceof ConfigError) {
      logEvent(logger, 'fatal', 'config_invalid', { problems: error.problems }, error.message);
    } else {
      logEvent(
        logger,
        'fatal',
        'service_failed',
        { error: describeError(error) },
        'configuration failed',
      );
    }
    process.exitCode = 1;
    return;
  }
  const logger = createLogger({
    service: ORCHESTRATOR_SERVICE,
    level: config.TDA_LOG_LEVEL,
    projectId: config.GOOGLE_CLOUD_PROJECT,
  });
  const backends = await createBackends(config);
  const app = await createOrchestratorApp({
    store: backends.store,
    broker: backends.broker,
    logger,
    config,
  });
  await app.startAllMicroservices();
  await app.listen(config.PORT);
  logEvent(logger, 'info', 'service_started', {
    port: config.PORT,
    backend: backends.describe(),
    pubsubPrefix: config.TDA_PUBSUB_PREFIX,
    reconcileIntervalMs: config.TDA_RECONCILE_INTERVAL_MS,
  });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      try {
        await app.close(); // drains the step-event consumer, stops the reconciler
        await backends.close();
        logEvent(logger, 'info', 'service_stopped', { signal });
      } catch (error) {
        logEvent(
          logger,
          'error',
          'service_failed',
          { error: describeError(error) },
          'shutdown failed',
        );
        process.exitCode = 1;
      }
    })();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  logEvent(
    createLogger({ service: ORCHESTRATOR_SERVICE }),
    'fatal',
    'service_failed',
    { error: describeError(error) },
    'orchestrator failed to start',
  );
  process.exitCode = 1;
});
