import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import {
  currentLogContext,
  currentLogContextFrame,
  withLogContext,
  type LogContext,
  type LogContextFrame,
} from './log-context';
import type { LogEvent } from './log-events';
import { buildRedactPaths, isSecretKey, REDACTED, redactSecrets } from './redaction';
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
  const pinoOptions = {
    level,
    messageKey: 'message',
    base: { serviceContext: version === undefined ? { service } : { service, version } },
    timestamp: timeAndContextFields(projectId),
    formatters: {
      level: (label: string) => ({ severity: SEVERITY_BY_LEVEL[label] ?? 'DEFAULT' }),
      // Any-depth secret scrub; the redact paths below handle the usual places cheaply.
      log: (object: Record<string, unknown>) => redactSecrets(object),
    },
    redact: { paths: buildRedactPaths(), censor: REDACTED },
  };
  return destination === undefined ? pino(pinoOptions) : pino(pinoOptions, destination);
}

/**
 * pino's `timestamp` hook returns the JSON text that follows the level in every line. It carries
 * the ISO `time` (formatted once per millisecond) and the current log context, serialised once
 * per context: a context's fields went through pino's per-key serialisation on every line, and
 * the line's cost was mostly that (issue 16). The context comes before the call-site fields, so
 * a call-site field of the same name wins when the line is parsed, as pino's own child bindings
 * do.
 */
function timeAndContextFields(projectId: string | undefined): () => string {
  const contextText = contextTextOf(projectId);
  let formattedMs = Number.NaN;
  let time = '';
  return () => {
    const now = Date.now();
    if (now !== formattedMs) {
      formattedMs = now;
      time = `,"time":"${new Date(now).toISOString()}"`;
    }
    const frame = currentLogContextFrame();
    return frame === undefined ? time : time + contextText(frame);
  };
}

/**
 * What a context adds to each line, as JSON text: its fields (secret keys redacted), the
 * traceparent turned into Cloud Logging's trace fields. Worked out once per context (kept on its
 * frame), and a context that only added fields to its parent reuses the parent's text.
 */
function contextTextOf(projectId: string | undefined): (frame: LogContextFrame) => string {
  const variant = projectId ?? '';
  const fieldsText = (fields: LogContext): string => {
    let text = '';
    for (const key in fields) {
      if (key !== 'traceparent') text += fieldText(key, fields[key]);
    }
    const traceparent = fields['traceparent'];
    if (typeof traceparent !== 'string') return text;
    for (const [key, value] of Object.entries(cloudTraceFields(traceparent, projectId)))
      text += fieldText(key, value);
    return text;
  };
  const contextText = (frame: LogContextFrame): string => {
    if (frame.text !== undefined && frame.textKey === variant) return frame.text;
    const { extension } = frame;
    const text =
      extension === undefined
        ? fieldsText(frame.fields)
        : contextText(extension.parent) + fieldsText(extension.added);
    frame.text = text;
    frame.textKey = variant;
    return text;
  };
  return contextText;
}

/** Strings that JSON writes as they are between quotes (control characters are what it escapes). */
// eslint-disable-next-line no-control-regex
const PLAIN_STRING = /^[^"\\\u0000-\u001f\u2028\u2029\ud800-\udfff]*$/;

function jsonText(value: unknown): string {
  return typeof value === 'string' && PLAIN_STRING.test(value)
    ? `"${value}"`
    : (JSON.stringify(value) ?? 'null');
}

/** `,"key":value` for one context field, a secret key's value redacted. */
function fieldText(key: string, value: unknown): string {
  return `,${jsonText(key)}:${jsonText(isSecretKey(key) ? REDACTED : value)}`;
}

/**
 * Writes one line for one taxonomy event. `event` is applied last so a stray `event` key in
 * `fields` cannot rename the line; the message defaults to the event name. A scalar field that
 * the current context also has is left to the context when equal, else written through a
 * context that overrides it, so the line names each key once (the context's text comes before
 * the call-site fields).
 */
export function logEvent(
  logger: Logger,
  level: LogLevel,
  event: LogEvent,
  fields: Record<string, unknown> = {},
  message?: string,
): void {
  if (!logger.isLevelEnabled(level)) return;
  const context = currentLogContext();
  let overrides: Record<string, string | number | boolean> | undefined;
  let rest: Record<string, unknown> = fields;
  for (const key in fields) {
    const value = fields[key];
    const scalar =
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
    if (!scalar || !Object.hasOwn(context, key) || !Object.hasOwn(fields, key)) continue;
    // The context already says it: drop the field. Only a different value needs a new context.
    if (context[key] !== value) (overrides ??= {})[key] = value;
    if (rest === fields) rest = { ...fields };
    delete rest[key];
  }
  const write = (): void => logger[level]({ ...rest, event }, message ?? event);
  if (overrides === undefined) write();
  else withLogContext(overrides, write);
}
