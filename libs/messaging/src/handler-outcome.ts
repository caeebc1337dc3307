/**
 * What a handler may return to say how the message was settled. Any normal return acks; these
 * values only make the log line say why. A thrown error (or rejected promise, or errored
 * Observable) nacks — see PubSubServer.
 */
export type HandlerOutcome =
  | { readonly outcome: 'processed'; readonly detail?: string }
  /** A decided no-op (duplicate, step already finished, run cancelled ...). */
  | { readonly outcome: 'noop'; readonly reason: string }
  /** The message can never be processed (bad body): ack so it cannot loop; log message_invalid. */
  | { readonly outcome: 'invalid'; readonly reason: string; readonly issues?: unknown };

export function processed(detail?: string): HandlerOutcome {
  return detail === undefined ? { outcome: 'processed' } : { outcome: 'processed', detail };
}

export function noop(reason: string): HandlerOutcome {
  return { outcome: 'noop', reason };
}

export function invalidMessage(reason: string, issues?: unknown): HandlerOutcome {
  return issues === undefined
    ? { outcome: 'invalid', reason }
    : { outcome: 'invalid', reason, issues };
}

export function isHandlerOutcome(value: unknown): value is HandlerOutcome {
  if (typeof value !== 'object' || value === null) return false;
  const outcome = (value as { outcome?: unknown }).outcome;
  return outcome === 'processed' || outcome === 'noop' || outcome === 'invalid';
}
