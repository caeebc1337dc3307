import type { Signal } from '@tda/contracts';

/** signals/{signalId} (DESIGN.md §2, flow 7). */
export const DEFAULT_SIGNALS_COLLECTION = 'signals';

export interface SignalListQuery {
  /** Only this owner's signals (in the query). */
  ownerId: string;
  /** Only this symbol, as its symbolKey (BTCUSDT: report-index parseSymbolKey of ?symbol=). */
  symbolKey?: string;
  /** 1..SCHEDULE_LIST_LIMIT_MAX. */
  limit: number;
  cursor?: string;
}

export interface SignalListPage {
  /** createdAt desc, then signalId desc. */
  signals: Signal[];
  nextCursor: string | null;
}

/**
 * Persistence of signals (flow 7). Semantics shared by every adapter (conformance suite):
 *
 * - `createOnce` is create-only by the deterministic signalId (flow-engine signalIdFor):
 *   'created' the first time, 'exists' afterwards whatever the new document says, so a replay
 *   or a redelivered event emits nothing new. The document is checked first (InvalidSignalError).
 *   A document with publishedAt is refused: that field is markPublished's.
 * - `markPublished(signalId, at)`: sets publishedAt once ('marked'); 'already_published' when it
 *   is set (the first time stays); SignalNotFoundError for a missing signal.
 * - `get` reads leniently; `list` is one owner's signals (optionally one symbolKey), createdAt
 *   desc then signalId desc, keyset pages like the schedules.
 */
export interface SignalStore {
  createOnce(signal: Signal): Promise<'created' | 'exists'>;
  markPublished(signalId: string, at: Date): Promise<'marked' | 'already_published'>;
  get(signalId: string): Promise<Signal | null>;
  list(query: SignalListQuery): Promise<SignalListPage>;
}
