import { ConfigError } from '@tda/config';
import { createLogger, describeError, logEvent, type Logger } from '@tda/observability';

export type ShutdownSignal = 'SIGTERM' | 'SIGINT';

/**
 * A boot that decided not to run (an enable toggle set to false): runServiceMain logs
 * `service_disabled` with the reason and leaves exit code 0. Not a failure and never mapped to
 * HTTP or ack/nack (it only ends a boot), hence no TdaError code.
 */
// eslint-disable-next-line no-restricted-syntax -- a boot outcome, not an error family
export class ServiceDisabledError extends Error {
  constructor(
    readonly service: string,
    readonly reason: string,
  ) {
    super(`${service} is disabled: ${reason}`);
    this.name = 'ServiceDisabledError';
  }
}

/** The part of `process` a service's main uses; tests pass a fake. */
export interface ServiceProcess {
  once(signal: ShutdownSignal, listener: () => void): unknown;
  exitCode?: number | string | null | undefined;
}

export interface RunServiceMainOptions {
  /** Service name of the fallback logger used when the boot itself fails. */
  service: string;
  /** Boots the service (e.g. bootstrapWorker); its logger reports the shutdown. */
  boot: () => Promise<{ logger: Logger; close(): Promise<void> }>;
  /** Signals and exit code; default the real `process`. */
  process?: ServiceProcess;
  /** Logger for a failed boot (no service logger exists yet); default createLogger({ service }). */
  logger?: Logger;
}

export interface RunningServiceMain {
  /** What a signal does: close once (later calls return the same promise), then service_stopped. */
  stop(signal: ShutdownSignal): Promise<void>;
}

/**
 * A service's main.ts (every worker and the orchestrator): boot, then close once on SIGTERM (Cloud Run) or SIGINT. Never rejects:
 * - a disabled service (ServiceDisabledError) → `service_disabled` (info) and exit code 0;
 * - invalid configuration → `config_invalid` (fatal, with the problems) and exit code 1;
 * - any other boot failure → `service_failed` (fatal) and exit code 1;
 * - a signal → `close()` once → `service_stopped`; a failed close → `service_failed`, exit code 1.
 * The exit code is set rather than process.exit() called, so buffered log lines are written and
 * the process ends when nothing is left to run. Resolves to undefined when the boot failed.
 */
export async function runServiceMain(
  options: RunServiceMainOptions,
): Promise<RunningServiceMain | undefined> {
  const proc: ServiceProcess = options.process ?? process;
  let handle: Awaited<ReturnType<RunServiceMainOptions['boot']>>;
  try {
    handle = await options.boot();
  } catch (error) {
    const logger = options.logger ?? createLogger({ service: options.service });
    if (error instanceof ServiceDisabledError) {
      logEvent(logger, 'info', 'service_disabled', { reason: error.reason }, error.message);
      proc.exitCode = 0;
      return undefined;
    }
    if (error instanceof ConfigError) {
      logEvent(logger, 'fatal', 'config_invalid', { problems: error.problems }, error.message);
    } else {
      logEvent(
        logger,
        'fatal',
        'service_failed',
        { error: describeError(error) },
        `${options.service} failed to start`,
      );
    }
    proc.exitCode = 1;
    return undefined;
  }
  const { logger } = handle;
  let stopping: Promise<void> | undefined;
  const stop = (signal: ShutdownSignal): Promise<void> => {
    stopping ??= handle.close().then(
      () => logEvent(logger, 'info', 'service_stopped', { signal }),
      (error: unknown) => {
        logEvent(
          logger,
          'error',
          'service_failed',
          { signal, error: describeError(error) },
          'shutdown failed',
        );
        proc.exitCode = 1;
      },
    );
    return stopping;
  };
  proc.once('SIGTERM', () => void stop('SIGTERM'));
  proc.once('SIGINT', () => void stop('SIGINT'));
  return { stop };
}
