import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Fields that describe the unit of work in progress (one message, one request). The well-known
 * ones are typed; anything else must still be a scalar so a context can never smuggle a large
 * object (or a prompt) into every log line.
 */
export interface LogContextFields {
  runId?: string;
  stepId?: string;
  stepType?: string;
  attempt?: number;
  messageId?: string;
  messageType?: string;
  deliveryAttempt?: number;
  subscription?: string;
  /** W3C traceparent; the logger turns it into Cloud Logging trace fields. */
  traceparent?: string;
  [key: string]: string | number | boolean | undefined;
}

export type LogContext = Readonly<Record<string, string | number | boolean>>;

const storage = new AsyncLocalStorage<LogContext>();

const EMPTY: LogContext = Object.freeze({});

/** The context of the current async execution (empty outside any withLogContext). */
export function currentLogContext(): LogContext {
  return storage.getStore() ?? EMPTY;
}

/**
 * Runs `fn` with `fields` merged over the current context. Every log line written while `fn` (and
 * everything it awaits) runs carries these fields; concurrent calls never see each other's fields
 * because AsyncLocalStorage follows the async call chain, not time. Undefined values are dropped
 * rather than stored, so a missing attribute cannot blank out an inherited field.
 */
export function withLogContext<T>(fields: LogContextFields, fn: () => T): T {
  const merged: Record<string, string | number | boolean> = { ...currentLogContext() };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) merged[key] = value;
  }
  return storage.run(Object.freeze(merged), fn);
}
