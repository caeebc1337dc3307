import {
  type CollectionReference,
  type DocumentReference,
  type DocumentSnapshot,
  FieldPath,
  FieldValue,
  type Firestore,
  GrpcStatus,
  type Query,
  Timestamp,
} from '@google-cloud/firestore';
import type { FlowRun } from '@tda/contracts';
import {
  type RunPatch,
  applyPatchShared,
  deepFreeze,
  isFieldDelete,
  isStorageSafeStepId,
} from '@tda/flow-engine';
import {
  RunAlreadyExistsError,
  RunNotFoundError,
  StoreUnavailableError,
  VersionConflictError,
} from './flow-store.errors';
import {
  DEFAULT_FLOW_RUNS_COLLECTION,
  type FlowRunStore,
  type RunListPage,
  type RunCountQuery,
  type RunListQuery,
  type VersionedRun,
} from './flow-run-store.port';
import type { RunChangeFeed, RunFeedSubscription } from './run-change-feed.port';
import { CHECKPOINTS_SUBCOLLECTION, type StepCheckpointStore } from './step-checkpoint.port';
import { firestoreGrpcCode, guardFirestoreCall } from './firestore-status';
import {
  type StoredPatch,
  isRunId,
  prepareNewRun,
  prepareRunPatch,
  readRunDocument,
} from './run-document';
import { toPage, validateListQuery } from './run-list';

export interface FirestoreFlowRunStoreOptions {
  /** Collection of the run documents; tests use a unique one each. */
  collection?: string;
  /** Source of `updatedAt` stamps. */
  clock?: () => Date;
  /** How many runs' last-seen snapshots to keep for computing update results (see update). */
  snapshotCacheSize?: number;
}

/** The version is the document's update time, exact to the nanosecond: `<seconds>.<nanos:9>`. */
function versionOf(time: Timestamp): string {
  return `${time.seconds}.${String(time.nanoseconds).padStart(9, '0')}`;
}

function timestampOf(version: string): Timestamp | null {
  const match = /^(\d{1,15})\.(\d{9})$/.exec(version);
  if (match === null) return null;
  return new Timestamp(Number(match[1]), Number(match[2]));
}

/**
 * FlowRunStore on Firestore: one document per run in `collection` (default `flow_runs`), doc id =
 * runId. Conditional updates use the update-time precondition (`lastUpdateTime`), never
 * transactions (seed 002). Field paths are built with `new FieldPath(...segments)`, so stepIds
 * with ':' or '-' never depend on how the client parses dotted strings.
 */
export class FirestoreFlowRunStore implements FlowRunStore, RunChangeFeed, StepCheckpointStore {
  private readonly collection: CollectionReference;
  private readonly clock: () => Date;
  private readonly cacheSize: number;
  /**
   * runId → the last snapshot this instance read or wrote. `update` must return the run as
   * written without reading it again (DESIGN.md §8 read budget): the caller normally read the
   * run through this instance just before, so the run at `expectedVersion` is here, and the
   * patch applied to that cached copy gives the written state exactly (the precondition proves
   * nothing else changed). On a miss the adapter reads the document at the write time instead.
   */
  private readonly snapshots = new Map<string, VersionedRun>();

  constructor(
    private readonly firestore: Firestore,
    options: FirestoreFlowRunStoreOptions = {},
  ) {
    this.collection = firestore.collection(options.collection ?? DEFAULT_FLOW_RUNS_COLLECTION);
    this.clock = options.clock ?? (() => new Date());
    this.cacheSize = Math.max(0, options.snapshotCacheSize ?? 256);
  }

  create(run: FlowRun): Promise<VersionedRun> {
    return this.guarded('create', () => this.createDocument(run));
  }

  get(runId: string): Promise<VersionedRun | null> {
    return this.guarded('get', () => this.readDocument(runId));
  }

  /** A snapshot listener on flow_runs/{runId}. */
  watchRun(
    runId: string,
    onRun: (run: FlowRun | null) => void,
    onError: (error: Error) => void,
  ): RunFeedSubscription {
    if (!isRunId(runId)) {
      setImmediate(() => onRun(null));
      return { close: () => undefined };
    }
    const stop = this.ref(runId).onSnapshot((snapshot) => {
      const data = snapshot.data();
      onRun(data === undefined ? null : readRunDocument(runId, data));
    }, onError);
    return { close: stop };
  }

  /**
   * A query listener: ownerId == owner and updatedAt >= since (composite index ownerId +
   * updatedAt, deploy/firestore). Each snapshot passes the documents added or modified in it.
   */
  watchOwner(
    ownerId: string,
    since: string,
    onRuns: (runs: FlowRun[]) => void,
    onError: (error: Error) => void,
  ): RunFeedSubscription {
    const query = this.collection.where('ownerId', '==', ownerId).where('updatedAt', '>=', since);
    const stop = query.onSnapshot((snapshot) => {
      const changed = snapshot
        .docChanges()
        .filter((change) => change.type !== 'removed')
        .map((change) => readRunDocument(change.doc.id, change.doc.data()));
      if (changed.length > 0 || snapshot.docChanges().length === 0) onRuns(changed);
    }, onError);
    return { close: stop };
  }

  update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    return this.guarded('update', () => this.updateDocument(runId, patch, expectedVersion));
  }

  list(query: RunListQuery): Promise<RunListPage> {
    return this.guarded('list', () => this.queryDocuments(query));
  }

  /** A count aggregation (equality filters only: single-field indexes, no composite). */
  count(query: RunCountQuery): Promise<number> {
    return this.guarded('count', async () => {
      let q: Query = this.collection.where('status', '==', query.status);
      if (query.ownerId !== undefined) q = q.where('ownerId', '==', query.ownerId);
      return (await q.count().get()).data().count;
    });
  }

  /**
   * Every call of the port, with Firestore's transient failures as a coded, retryable
   * StoreUnavailableError: callers (API → 502, message handlers → nack) need no Firestore codes.
   */
  private guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return guardFirestoreCall(
      call,
      (status, cause) => new StoreUnavailableError(operation, status, cause),
    );
  }

  private async createDocument(run: FlowRun): Promise<VersionedRun> {
    const doc = prepareNewRun(run, this.clock());
    try {
      const result = await this.ref(doc.runId).create(doc);
      return this.remember({ run: doc, version: versionOf(result.writeTime) });
    } catch (error) {
      if (firestoreGrpcCode(error) === GrpcStatus.ALREADY_EXISTS)
        throw new RunAlreadyExistsError(doc.runId);
      throw error;
    }
  }

  private async readDocument(runId: string): Promise<VersionedRun | null> {
    if (!isRunId(runId)) return null;
    const snapshot = await this.ref(runId).get();
    const versioned = this.fromSnapshot(runId, snapshot);
    return versioned === null ? null : this.remember(versioned);
  }

  private async updateDocument(
    runId: string,
    patch: RunPatch,
    expectedVersion: string,
  ): Promise<VersionedRun> {
    const stored = prepareRunPatch(runId, patch, this.clock());
    if (!isRunId(runId)) throw new RunNotFoundError(runId);
    const ref = this.ref(runId);
    const lastUpdateTime = timestampOf(expectedVersion);
    // A version this adapter could not have produced cannot be current.
    if (lastUpdateTime === null) throw await this.explainRejection(ref, runId, expectedVersion);

    const [first, ...rest] = toUpdateArguments(stored);
    if (first === undefined) throw new Error('unreachable: a stored patch always sets updatedAt');
    let writeTime: Timestamp;
    try {
      const result = await ref.update(first[0], first[1], ...rest.flat(), { lastUpdateTime });
      writeTime = result.writeTime;
    } catch (error) {
      const code = firestoreGrpcCode(error);
      if (code === GrpcStatus.NOT_FOUND) throw new RunNotFoundError(runId);
      // A missing document also fails the update-time precondition; tell the two apart.
      if (code === GrpcStatus.FAILED_PRECONDITION || code === GrpcStatus.ABORTED) {
        throw await this.explainRejection(ref, runId, expectedVersion);
      }
      throw error;
    }

    const version = versionOf(writeTime);
    const before = this.snapshots.get(runId);
    if (before !== undefined && before.version === expectedVersion) {
      // The cached snapshot, patched with structural sharing instead of read back.
      return this.remember({ run: applyPatchShared(before.run, stored), version });
    }
    const written = await this.firestore.runTransaction(async (t) => t.get(ref), {
      readOnly: true,
      readTime: writeTime,
    });
    // Not validated: like the computed result, this is exactly what the caller's patch produced.
    const versioned = this.fromSnapshot(runId, written, (data) => data as FlowRun);
    if (versioned === null || versioned.version !== version) {
      throw new Error(`flow run '${runId}': the read at the write time did not see the write`);
    }
    return this.remember(versioned);
  }

  private async queryDocuments(query: RunListQuery): Promise<RunListPage> {
    const { limit, after, filters } = validateListQuery(query);
    let q: Query = this.collection;
    for (const [field, value] of Object.entries(filters)) q = q.where(field, '==', value);
    q = q.orderBy('createdAt', 'desc').orderBy(FieldPath.documentId(), 'desc');
    if (after !== null) q = q.startAfter(after.createdAt, after.runId);
    const snapshot = await q.limit(limit + 1).get();
    const runs = snapshot.docs.map((doc) => readRunDocument(doc.id, doc.data()));
    return toPage(runs, limit);
  }

  writeCheckpoint(
    runId: string,
    stepId: string,
    data: Record<string, unknown>,
    guard: (run: FlowRun) => boolean,
  ): Promise<'written' | 'refused'> {
    return this.guarded('writeCheckpoint', async () => {
      if (!isRunId(runId) || !isStorageSafeStepId(stepId)) return 'refused';
      const ref = this.ref(runId);
      // The run document is read in the transaction: a write after the lease changed aborts it.
      return this.firestore.runTransaction(async (t) => {
        const versioned = this.fromSnapshot(runId, await t.get(ref));
        if (versioned === null || !guard(versioned.run)) return 'refused' as const;
        t.set(ref.collection(CHECKPOINTS_SUBCOLLECTION).doc(stepId), data);
        return 'written' as const;
      });
    });
  }

  readCheckpoint(runId: string, stepId: string): Promise<Record<string, unknown> | null> {
    return this.guarded('readCheckpoint', async () => {
      if (!isRunId(runId) || !isStorageSafeStepId(stepId)) return null;
      const doc = await this.ref(runId).collection(CHECKPOINTS_SUBCOLLECTION).doc(stepId).get();
      return doc.data() ?? null;
    });
  }

  private ref(runId: string): DocumentReference {
    return this.collection.doc(runId);
  }

  private fromSnapshot(
    runId: string,
    snapshot: DocumentSnapshot,
    read: (data: Record<string, unknown>) => FlowRun = (data) => readRunDocument(runId, data),
  ): VersionedRun | null {
    const data = snapshot.data();
    const updateTime = snapshot.updateTime;
    if (!snapshot.exists || data === undefined || updateTime === undefined) return null;
    return { run: read(data), version: versionOf(updateTime) };
  }

  private async explainRejection(
    ref: DocumentReference,
    runId: string,
    expectedVersion: string,
  ): Promise<Error> {
    const snapshot = await ref.get();
    return snapshot.exists
      ? new VersionConflictError(runId, expectedVersion)
      : new RunNotFoundError(runId);
  }

  /**
   * Freezes `versioned`'s run, caches it and hands it out as it is: results are read-only
   * snapshots, as in the in-memory adapter, so neither a read nor a write copies the document.
   * The run passed in must be one nobody else holds (freshly decoded, prepared or patched).
   */
  private remember(versioned: VersionedRun): VersionedRun {
    deepFreeze(versioned.run);
    const runId = versioned.run.runId;
    if (this.cacheSize === 0) return versioned;
    this.snapshots.delete(runId);
    this.snapshots.set(runId, versioned);
    // Map iteration order is insertion order: the first key is the least recently touched.
    for (const oldest of this.snapshots.keys()) {
      if (this.snapshots.size <= this.cacheSize) break;
      this.snapshots.delete(oldest);
    }
    return versioned;
  }
}

/** `[FieldPath, value]` pairs for the varargs form of update(); FIELD_DELETE → FieldValue.delete(). */
function toUpdateArguments(patch: StoredPatch): Array<[FieldPath, unknown]> {
  return Object.entries(patch).map(([path, value]) => [
    new FieldPath(...path.split('.')),
    isFieldDelete(value) ? FieldValue.delete() : value,
  ]);
}
