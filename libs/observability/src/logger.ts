import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { currentLogContext, type LogContext } from './log-context';
import type { LogEvent } from './log-events';
import { buildRedactPaths, REDACTED, redactSecrets } from './redaction';
import { cloudTraceFields } from './trace-context';

export type Logger = PinoLogger;
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export interface LoggerOptions {
  /** Reported as serviceContext.service (Cloud Error Reporting groups by it). */
  service: string;
  level?: LogLevel | 'silent';
  version?: string;
  /** GCP project; when set, trace ids are written as projects/<id>/traces/<traceId>. */
  projectId?: string;
  /** Where lines go; stdout (what Cloud Run collects) when omitted. Tests pass a capture. */
  destination?: DestinationStream;
}

/** pino level label -> Cloud Logging LogSeverity. */
export const SEVERITY_BY_LEVEL: Readonly<Record<string, string>> = {
  trace: 'DEBUG',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARNING',
  error: 'ERROR',
  fatal: 'CRITICAL',
};

/**
 * A pino logger writing Cloud Logging structured JSON: `severity`, `message`, ISO `time`,
 * `serviceContext`, the trace fields derived from the current context's traceparent, and the
 * current log context (runId, stepId, messageId, ...) merged into every line. Secrets are
 * redacted by pino paths (top level and common containers) and by key at any depth
 * (formatters.log); use logEvent() so each line names one event from the taxonomy.
 */
export function createLogger(options: LoggerOptions): Logger {
  const { service, level = 'info', version, projectId, destination } = options;
  const contextFields = contextFieldsOf(projectId);
  const pinoOptions = {
    level,
    messageKey: 'message',
    base: { serviceContext: version === undefined ? { service } : { service, version } },
    timestamp: isoTimeField(),
    formatters: {
      level: (label: string) => ({ severity: SEVERITY_BY_LEVEL[label] ?? 'DEFAULT' }),
      // Any-depth secret scrub; the redact paths below handle the usual places cheaply.
      log: (object: Record<string, unknown>) => redactSecrets(object),
    },
    mixin: () => contextFields(currentLogContext()),
    // Call-site fields win over the context. A new object: the mixin's is cached per context.
    mixinMergeStrategy: (mergeObject: object, mixinObject: object) => ({
      ...mixinObject,
      ...mergeObject,
    }),
    redact: { paths: buildRedactPaths(), censor: REDACTED },
  };
  return destination === undefined ? pino(pinoOptions) : pino(pinoOptions, destination);
}

/**
 * pino's `time` field as ISO 8601, formatted once per millisecond: lines come in bursts, and a
 * Date and its toISOString per line were a tenth of a line's cost (issue 16).
 */
function isoTimeField(): () => string {
  let formattedMs = Number.NaN;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== formattedMs) {
      formattedMs = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

/**
 * What a context adds to each line: its fields, the traceparent turned into Cloud Logging's
 * trace fields. Contexts are frozen, so this is worked out once per context, not once per line
 * (issue 16: parsing the traceparent on every line was a tenth of a line's cost).
 */
function contextFieldsOf(projectId: string | undefined) {
  const fieldsByContext = new WeakMap<LogContext, Readonly<Record<string, unknown>>>();
  return (context: LogContext): Readonly<Record<string, unknown>> => {
    let fields = fieldsByContext.get(context);
    if (fields === undefined) {
      const { traceparent, ...rest } = context;
      const trace = typeof traceparent === 'string' ? traceparent : undefined;
      fields = Object.freeze({ ...rest, ...cloudTraceFields(trace, projectId) });
      fieldsByContext.set(context, fields);
    }
    return fields;
  };
}

/**
 * Writes one line for one taxonomy event. `event` is applied last so a stray `event` key in
 * `fields` cannot rename the line; the message defaults to the event name.
 */
export function logEvent(
  logger: Logger,
  level: LogLevel,
  event: LogEvent,
  fields: Record<string, unknown> = {},
  message?: string,
): void {
  if (!logger.isLevelEnabled(level)) return;
  logger[level]({ ...fields, event }, message ?? event);
}
