import {
  type CollectionReference,
  FieldPath,
  type Firestore,
  GrpcStatus,
  type Query,
} from '@google-cloud/firestore';
import type { Signal } from '@tda/contracts';
import { SIGNAL_ID_PATTERN } from '@tda/flow-engine';
import { firestoreGrpcCode, guardFirestoreCall } from './firestore-status';
import { keysetPage, validateKeysetQuery } from './keyset-cursor';
import { assertWritableSignal, readSignalDocument } from './schedule-documents';
import {
  ScheduleStoreError,
  ScheduleStoreUnavailableError,
  SignalNotFoundError,
} from './schedule-store.errors';
import {
  DEFAULT_SIGNALS_COLLECTION,
  type SignalListPage,
  type SignalListQuery,
  type SignalStore,
} from './signal-store.port';

export interface FirestoreSignalStoreOptions {
  /** Collection of the signal documents (default `signals`); tests use a unique one each. */
  collection?: string;
}

/** markPublished re-reads after a lost race this many times (only markPublished writes a signal). */
const MARK_ATTEMPTS = 3;

/**
 * SignalStore on Firestore: `signals/{signalId}`. `createOnce` is `DocumentReference.create`
 * (ALREADY_EXISTS → 'exists': no read, no transaction); `markPublished` is a conditional update on
 * the update time read. `list` = ownerId == (+ symbolKey ==), createdAt desc, __name__ desc; its
 * composite indexes are in deploy/firestore/firestore.indexes.json.
 */
export class FirestoreSignalStore implements SignalStore {
  private readonly collection: CollectionReference;

  constructor(firestore: Firestore, options: FirestoreSignalStoreOptions = {}) {
    this.collection = firestore.collection(options.collection ?? DEFAULT_SIGNALS_COLLECTION);
  }

  createOnce(signal: Signal): Promise<'created' | 'exists'> {
    return this.guarded('createOnce', async () => {
      const doc = assertWritableSignal(signal);
      try {
        await this.collection.doc(doc.signalId).create(doc);
        return 'created';
      } catch (error) {
        if (firestoreGrpcCode(error) === GrpcStatus.ALREADY_EXISTS) return 'exists';
        throw error;
      }
    });
  }

  markPublished(signalId: string, at: Date): Promise<'marked' | 'already_published'> {
    return this.guarded('markPublished', async () => {
      if (!SIGNAL_ID_PATTERN.test(signalId)) throw new SignalNotFoundError(signalId);
      const ref = this.collection.doc(signalId);
      for (let attempt = 1; attempt <= MARK_ATTEMPTS; attempt += 1) {
        const snapshot = await ref.get();
        const lastUpdateTime = snapshot.updateTime;
        if (!snapshot.exists || lastUpdateTime === undefined) {
          throw new SignalNotFoundError(signalId);
        }
        if (snapshot.get('publishedAt') !== undefined) return 'already_published';
        try {
          await ref.update({ publishedAt: at.toISOString() }, { lastUpdateTime });
          return 'marked';
        } catch (error) {
          const code = firestoreGrpcCode(error);
          if (code === GrpcStatus.NOT_FOUND) throw new SignalNotFoundError(signalId);
          if (code !== GrpcStatus.FAILED_PRECONDITION && code !== GrpcStatus.ABORTED) throw error;
        }
      }
      throw new ScheduleStoreError('CONFLICT', `signal '${signalId}' kept changing`, {
        details: { signalId, attempts: MARK_ATTEMPTS },
        retryable: true,
      });
    });
  }

  get(signalId: string): Promise<Signal | null> {
    return this.guarded('get', async () => {
      if (!SIGNAL_ID_PATTERN.test(signalId)) return null;
      const data = (await this.collection.doc(signalId).get()).data();
      return data === undefined ? null : readSignalDocument(signalId, data);
    });
  }

  list(query: SignalListQuery): Promise<SignalListPage> {
    return this.guarded('list', async () => {
      const { ownerId, limit, after } = validateKeysetQuery(query, SIGNAL_ID_PATTERN);
      let q: Query = this.collection.where('ownerId', '==', ownerId);
      if (query.symbolKey !== undefined) q = q.where('symbolKey', '==', query.symbolKey);
      q = q.orderBy('createdAt', 'desc').orderBy(FieldPath.documentId(), 'desc');
      if (after !== null) q = q.startAfter(after.createdAt, after.id);
      const snapshot = await q.limit(limit + 1).get();
      const rows = snapshot.docs.map((doc) => readSignalDocument(doc.id, doc.data()));
      const page = keysetPage(rows, limit, (s) => ({ createdAt: s.createdAt, id: s.signalId }));
      return { signals: page.items, nextCursor: page.nextCursor };
    });
  }

  /** Every call, with Firestore's transient failures as a retryable ScheduleStoreUnavailableError. */
  private guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return guardFirestoreCall(
      call,
      (status, cause) => new ScheduleStoreUnavailableError(operation, status, cause, 'signal'),
    );
  }
}
