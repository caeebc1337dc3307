import { useEffect, useRef, useState } from 'react';
import { getToken } from '../auth/token-store';
import { followEventStream, type StreamState } from './event-stream';
import { parseRunEvent, type RunEvent } from './sse-parser';

interface UseEventStreamOptions {
  /** After the server ended the stream: open it again? (a per-run stream ends with its run) */
  shouldReconnect?: () => boolean;
  onUnauthorized?: () => void;
}

/**
 * Follows an event stream of the API while mounted and `path` is set; each run event goes to
 * `onEvent`. Returns the stream state, which the pages use to poll while it is not live.
 */
export function useEventStream(
  path: string | null,
  onEvent: (event: RunEvent) => void,
  options: UseEventStreamOptions = {},
): StreamState {
  const [current, setCurrent] = useState<{ path: string; state: StreamState } | undefined>(
    undefined,
  );
  // Latest callbacks without reopening the stream on every render.
  const handlers = useRef({ onEvent, ...options });
  useEffect(() => {
    handlers.current = { onEvent, ...options };
  });

  useEffect(() => {
    if (path === null) return undefined;
    const controller = new AbortController();
    void followEventStream({
      url: new URL(path, globalThis.location.origin).toString(),
      signal: controller.signal,
      headers: (): Record<string, string> => {
        const token = getToken();
        return token === null ? {} : { Authorization: `Bearer ${token}` };
      },
      onEvent: (message) => {
        const event = parseRunEvent(message);
        if (event !== undefined) handlers.current.onEvent(event);
      },
      onState: (next) => {
        if (!controller.signal.aborted) setCurrent({ path, state: next });
      },
      shouldReconnect: () => handlers.current.shouldReconnect?.() ?? true,
      onUnauthorized: () => handlers.current.onUnauthorized?.(),
    });
    return () => controller.abort();
  }, [path]);

  if (path === null) return 'closed';
  return current?.path === path ? current.state : 'connecting';
}

/** Polling interval while a stream is not live (the spec's fallback: every 5 s). */
export const POLL_MS = 5_000;

export function pollWhileNotLive(state: StreamState): number | false {
  return state === 'live' || state === 'closed' ? false : POLL_MS;
}
