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

/**
 * One withLogContext call: the merged fields, and how they were made. When it only added fields
 * to a non-empty parent, the logger serialises just those and reuses the parent's text (a
 * message nests a few contexts and logs a line or two in each; issue 16). `text` is the logger's
 * cache of the serialised fields, for the variant named by `textKey`.
 */
export class LogContextFrame {
  text: string | undefined;
  textKey: string | undefined;

  constructor(
    readonly fields: LogContext,
    readonly extension: { parent: LogContextFrame; added: LogContext } | undefined,
  ) {}
}

const storage = new AsyncLocalStorage<LogContextFrame>();

const EMPTY: LogContext = Object.freeze({});

/** The context of the current async execution (empty outside any withLogContext). */
export function currentLogContext(): LogContext {
  return storage.getStore()?.fields ?? EMPTY;
}

/** The current frame (undefined outside any withLogContext): the logger's view of the context. */
export function currentLogContextFrame(): LogContextFrame | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` with `fields` merged over the current context. Every log line written while `fn` (and
 * everything it awaits) runs carries these fields; concurrent calls never see each other's fields
 * because AsyncLocalStorage follows the async call chain, not time. Undefined values are dropped
 * rather than stored, so a missing attribute cannot blank out an inherited field.
 */
export function withLogContext<T>(fields: LogContextFields, fn: () => T): T {
  const parent = storage.getStore();
  const merged: Record<string, string | number | boolean> = { ...parent?.fields };
  const added: Record<string, string | number | boolean> = {};
  let overrides = false;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined || !Object.hasOwn(fields, key)) continue;
    overrides ||= Object.hasOwn(merged, key);
    merged[key] = value;
    added[key] = value;
  }
  const extension = parent === undefined || overrides ? undefined : { parent, added };
  return storage.run(new LogContextFrame(Object.freeze(merged), extension), fn);
}
