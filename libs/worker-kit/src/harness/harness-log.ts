import { logEvent, type LogEvent, type Logger, type LogLevel } from '@tda/observability';

/**
 * The harness's log lines: one event name from the taxonomy per line, the worker identity on
 * each, the rest of the context (runId, stepId, attempt, ...) from the delivery's log context.
 */
export class HarnessLog {
  constructor(
    readonly logger: Logger,
    private readonly worker: string,
  ) {}

  write(level: LogLevel, event: LogEvent, fields: Record<string, unknown> = {}): void {
    logEvent(this.logger, level, event, { ...fields, worker: this.worker });
  }

  info(event: LogEvent, fields?: Record<string, unknown>): void {
    this.write('info', event, fields);
  }

  warn(event: LogEvent, fields?: Record<string, unknown>): void {
    this.write('warn', event, fields);
  }
}
