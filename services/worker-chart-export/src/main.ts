import 'reflect-metadata';
import { ConfigError } from '@tda/config';
import { createLogger, describeError, logEvent } from '@tda/observability';
import { CHART_EXPORT_SERVICE } from './config';
import { bootstrapChartExportWorker } from './worker-chart-export.bootstrap';

/**
 * Standalone boot:
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-chart-export/src/main.ts`
 */
async function main(): Promise<void> {
  let handle;
  try {
    handle = await bootstrapChartExportWorker();
  } catch (error) {
    const logger = createLogger({ service: CHART_EXPORT_SERVICE });
    if (error instanceof ConfigError) {
      logEvent(logger, 'fatal', 'config_invalid', { problems: error.problems }, error.message);
    } else logger.fatal({ error: describeError(error) }, 'worker-chart-export failed to start');
    process.exitCode = 1;
    return;
  }
  const { logger } = handle;
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    handle.close().then(
      () => logEvent(logger, 'info', 'service_stopped', { signal }),
      (error: unknown) => {
        logger.error({ error: describeError(error) }, 'shutdown failed');
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

void main();
