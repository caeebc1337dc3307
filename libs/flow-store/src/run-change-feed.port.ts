import type { FlowRun } from '@tda/contracts';

/** A live subscription; close() stops the callbacks (idempotent). */
export interface RunFeedSubscription {
  close(): void;
}

/**
 * Real-time reads of run documents (seed 004 SSE), backed by Firestore snapshot listeners (they
 * work on the emulator and in GCP) or the in-memory store's own notifications — never a polling
 * loop. Both adapters pass one conformance suite.
 *
 * - `watchRun`: the document now (null when missing), then after every write; writes close
 *   together may arrive as one call with the latest document.
 * - `watchOwner`: the owner's runs whose `updatedAt >= since`, filtered in the query: first
 *   those that match now, then each run as it is written (a run enters the result when it is
 *   written after `since`).
 * - `onError` ends the subscription (the caller reopens it or ends its stream).
 */
export interface RunChangeFeed {
  watchRun(
    runId: string,
    onRun: (run: FlowRun | null) => void,
    onError: (error: Error) => void,
  ): RunFeedSubscription;
  watchOwner(
    ownerId: string,
    since: string,
    onRuns: (runs: FlowRun[]) => void,
    onError: (error: Error) => void,
  ): RunFeedSubscription;
}
