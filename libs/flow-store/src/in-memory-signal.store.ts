import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Signal } from '@tda/contracts';
import { SIGNAL_ID_PATTERN } from '@tda/flow-engine';
import { compareKeysetDesc, keysetPage, validateKeysetQuery } from './keyset-cursor';
import { assertWritableSignal, readSignalDocument } from './schedule-documents';
import { SignalNotFoundError } from './schedule-store.errors';
import type { SignalListPage, SignalListQuery, SignalStore } from './signal-store.port';

/**
 * SignalStore in process memory with the Firestore adapter's semantics: create-only by id,
 * publishedAt set once, lenient reads, the same list order and cursor. Copies in and out; every
 * method yields to the event loop first.
 */
export class InMemorySignalStore implements SignalStore {
  /** Raw stored documents: normally Signals, but seedRawDocument may store anything. */
  private readonly docs = new Map<string, Record<string, unknown>>();

  async createOnce(signal: Signal): Promise<'created' | 'exists'> {
    const doc = assertWritableSignal(signal);
    await nextTurn();
    if (this.docs.has(doc.signalId)) return 'exists';
    this.docs.set(doc.signalId, doc);
    return 'created';
  }

  async markPublished(signalId: string, at: Date): Promise<'marked' | 'already_published'> {
    const publishedAt = at.toISOString();
    await nextTurn();
    const doc = SIGNAL_ID_PATTERN.test(signalId) ? this.docs.get(signalId) : undefined;
    if (doc === undefined) throw new SignalNotFoundError(signalId);
    if (doc['publishedAt'] !== undefined) return 'already_published';
    this.docs.set(signalId, { ...doc, publishedAt });
    return 'marked';
  }

  async get(signalId: string): Promise<Signal | null> {
    await nextTurn();
    const doc = SIGNAL_ID_PATTERN.test(signalId) ? this.docs.get(signalId) : undefined;
    return doc === undefined ? null : readSignalDocument(signalId, structuredClone(doc));
  }

  async list(query: SignalListQuery): Promise<SignalListPage> {
    const { ownerId, limit, after } = validateKeysetQuery(query, SIGNAL_ID_PATTERN);
    await nextTurn();
    const rows = [...this.docs.entries()]
      .filter(
        ([, doc]) =>
          doc['ownerId'] === ownerId &&
          (query.symbolKey === undefined || doc['symbolKey'] === query.symbolKey),
      )
      .map(([id, doc]) => readSignalDocument(id, structuredClone(doc)))
      .filter((signal) => after === null || compareKeysetDesc(positionOf(signal), after) > 0)
      .sort((a, b) => compareKeysetDesc(positionOf(a), positionOf(b)))
      .slice(0, limit + 1);
    const page = keysetPage(rows, limit, positionOf);
    return { signals: page.items, nextCursor: page.nextCursor };
  }

  /** Test hook: stores a document as a foreign or older writer could have left it. */
  seedRawDocument(signalId: string, doc: Record<string, unknown>): void {
    this.docs.set(signalId, structuredClone(doc));
  }
}

function positionOf(signal: Signal): { createdAt: string; id: string } {
  return { createdAt: signal.createdAt, id: signal.signalId };
}
