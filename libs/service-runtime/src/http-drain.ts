import type { Server } from 'node:http';

/**
 * From now on `server` has `graceMs` to finish the requests in progress; connections still open
 * then are cut. server.close() waits for every connection with a request in progress, so one
 * half-sent request, or a client that stops reading, would hold a shutdown for as long as Node's
 * own request timeouts (60 s and more). Call it when the shutdown begins.
 */
export function cutBusyConnectionsAfter(server: Server, graceMs: number): void {
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  timer.unref();
  server.once('close', () => clearTimeout(timer));
}
