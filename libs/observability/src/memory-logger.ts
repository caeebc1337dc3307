import type { LogEvent } from './log-events';
import { createLogger, type Logger, type LoggerOptions } from './logger';

/** One parsed log line. */
export type LogRecord = Record<string, unknown> & {
  severity?: string;
  message?: string;
  event?: LogEvent;
};

export interface MemoryLogger {
  logger: Logger;
  /** Every line written so far, parsed, oldest first. */
  readonly records: LogRecord[];
  /** The lines that carry `event`. */
  withEvent(event: LogEvent): LogRecord[];
  clear(): void;
}

/**
 * A real createLogger() logger whose output is kept in memory (synchronously), for tests of code
 * that logs: assertions run against exactly what Cloud Logging would receive.
 */
export function createMemoryLogger(
  options: Omit<LoggerOptions, 'destination'> = { service: 'test', level: 'debug' },
): MemoryLogger {
  const records: LogRecord[] = [];
  const destination = {
    write(line: string): void {
      for (const part of line.split('\n')) {
        if (part.trim() !== '') records.push(JSON.parse(part) as LogRecord);
      }
    },
  };
  return {
    logger: createLogger({ ...options, destination }),
    records,
    withEvent: (event) => records.filter((record) => record.event === event),
    clear: () => {
      records.length = 0;
    },
  };
}
