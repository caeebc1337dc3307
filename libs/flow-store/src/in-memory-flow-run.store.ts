import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FlowRun } from '@tda/contracts';
import { type RunPatch, applyPatchInPlace, cloneJson, isStorageSafeStepId } from '@tda/flow-engine';
import { RunAlreadyExistsError, RunNotFoundError, VersionConflictError } from './flow-store.errors';
import type {
  FlowRunStore,
  RunCountQuery,
  RunListPage,
  RunListQuery,
  VersionedRun,
} from './flow-run-store.port';
import type { RunChangeFeed, RunFeedSubscription } from './run-change-feed.port';
import type { StepCheckpointStore } from './step-checkpoint.port';
import { isRunId, prepareNewRun, prepareRunPatch, readRunDocument } from './run-document';
import { compareListPosition, toPage, validateListQuery } from './run-list';

export interface InMemoryFlowRunStoreOptions {
  /** Source of `updatedAt` stamps. */
  clock?: () => Date;
}

/** A (possibly dotted) field path of a stored document, as Firestore resolves it. */
function fieldAt(doc: Record<string, unknown>, path: string): unknown {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

interface Entry {
  /** Raw stored document: normally a FlowRun, but seedRawDocument may store anything. */
  doc: Record<string, unknown>;
  version: string;
}

/**
 * FlowRunStore kept in process memory (TDA_BACKEND=memory and unit tests), with the semantics of
 * the Firestore adapter: conditional updates on an opaque version (a counter), create-only
 * creates, lenient reads, the same list order and cursor. Documents are deep-copied on the way in
 * and out, so callers can never mutate stored state, and every method yields to the event loop
 * before touching the map, so concurrent callers really interleave in tests.
 */
export class InMemoryFlowRunStore implements FlowRunStore, RunChangeFeed, StepCheckpointStore {
  private readonly docs = new Map<string, Entry>();
  private readonly checkpoints = new Map<string, Record<string, unknown>>();
  private readonly watchers = new Set<(run: FlowRun) => void>();
  private readonly clock: () => Date;
  private sequence = 0;

  constructor(options: InMemoryFlowRunStoreOptions = {}) {
    this.clock = options.clock ?? (() => new Date());
  }

  async create(run: FlowRun): Promise<VersionedRun> {
    const doc = prepareNewRun(run, this.clock());
    await nextTurn();
    if (this.docs.has(doc.runId)) throw new RunAlreadyExistsError(doc.runId);
    const version = this.nextVersion();
    this.docs.set(doc.runId, { doc: cloneJson(doc), version });
    this.notify(doc);
    return { run: doc, version };
  }

  async writeCheckpoint(
    runId: string,
    stepId: string,
    data: Record<string, unknown>,
    guard: (run: FlowRun) => boolean,
  ): Promise<'written' | 'refused'> {
    const copy = structuredClone(data);
    await nextTurn();
    const entry = isRunId(runId) && isStorageSafeStepId(stepId) ? this.docs.get(runId) : undefined;
    if (entry === undefined || !guard(readRunDocument(runId, cloneJson(entry.doc)))) {
      return 'refused';
    }
    this.checkpoints.set(`${runId}/${stepId}`, copy);
    return 'written';
  }

  async readCheckpoint(runId: string, stepId: string): Promise<Record<string, unknown> | null> {
    await nextTurn();
    const doc = this.checkpoints.get(`${runId}/${stepId}`);
    return doc === undefined ? null : structuredClone(doc);
  }

  async get(runId: string): Promise<VersionedRun | null> {
    await nextTurn();
    const entry = isRunId(runId) ? this.docs.get(runId) : undefined;
    if (entry === undefined) return null;
    return { run: readRunDocument(runId, cloneJson(entry.doc)), version: entry.version };
  }

  async update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    const stored = prepareRunPatch(runId, patch, this.clock());
    await nextTurn();
    const entry = isRunId(runId) ? this.docs.get(runId) : undefined;
    if (entry === undefined) throw new RunNotFoundError(runId);
    if (entry.version !== expectedVersion) throw new VersionConflictError(runId, expectedVersion);
    // The stored document is this store's own (every reader gets a copy): patched in place.
    const next = applyPatchInPlace(entry.doc as FlowRun, stored);
    const version = this.nextVersion();
    this.docs.set(runId, { doc: next as Record<string, unknown>, version });
    this.notify(next);
    return { run: cloneJson(next), version };
  }

  watchRun(
    runId: string,
    onRun: (run: FlowRun | null) => void,
    _onError: (error: Error) => void,
  ): RunFeedSubscription {
    const watcher = (run: FlowRun): void => {
      if (run.runId === runId) onRun(cloneJson(run));
    };
    return this.subscribe(watcher, () => {
      const entry = this.docs.get(runId);
      onRun(entry === undefined ? null : readRunDocument(runId, cloneJson(entry.doc)));
    });
  }

  watchOwner(
    ownerId: string,
    since: string,
    onRuns: (runs: FlowRun[]) => void,
    _onError: (error: Error) => void,
  ): RunFeedSubscription {
    const matches = (run: FlowRun): boolean => run.ownerId === ownerId && run.updatedAt >= since;
    const watcher = (run: FlowRun): void => {
      if (matches(run)) onRuns([cloneJson(run)]);
    };
    return this.subscribe(watcher, () => {
      const runs = [...this.docs.entries()]
        .map(([id, { doc }]) => readRunDocument(id, cloneJson(doc)))
        .filter(matches);
      onRuns(runs);
    });
  }

  /** Listeners hear of a write on a later turn, as a snapshot listener would. */
  private notify(run: FlowRun): void {
    if (this.watchers.size === 0) return;
    const copy = cloneJson(run);
    setImmediate(() => {
      for (const watcher of this.watchers) watcher(copy);
    });
  }

  private subscribe(watcher: (run: FlowRun) => void, initial: () => void): RunFeedSubscription {
    this.watchers.add(watcher);
    setImmediate(() => {
      if (this.watchers.has(watcher)) initial();
    });
    return { close: () => void this.watchers.delete(watcher) };
  }

  async count(query: RunCountQuery): Promise<number> {
    await nextTurn();
    let n = 0;
    for (const { doc } of this.docs.values()) {
      const matches =
        doc['status'] === query.status &&
        (query.ownerId === undefined || doc['ownerId'] === query.ownerId);
      if (matches) n += 1;
    }
    return n;
  }

  async list(query: RunListQuery): Promise<RunListPage> {
    const { limit, after, filters } = validateListQuery(query);
    await nextTurn();
    const matching = [...this.docs.entries()]
      // Firestore's orderBy('createdAt') leaves out documents without the field.
      .filter(([, { doc }]) => doc['createdAt'] !== undefined)
      .filter(([, { doc }]) =>
        Object.entries(filters).every(([field, value]) => fieldAt(doc, field) === value),
      )
      .map(([runId, { doc }]) => ({
        runId,
        createdAt: String(doc['createdAt']),
        doc,
      }))
      .filter((item) => after === null || compareListPosition(item, after) > 0)
      .sort(compareListPosition)
      .slice(0, limit + 1);
    const runs = matching.map(({ runId, doc }) => readRunDocument(runId, cloneJson(doc)));
    return toPage(runs, limit);
  }

  /**
   * Stores a document as is, without validation or stamping, the way a foreign or older writer
   * could have left it in Firestore. For tests of the lenient read path only.
   */
  async seedRawDocument(runId: string, doc: Record<string, unknown>): Promise<void> {
    await nextTurn();
    this.docs.set(runId, { doc: structuredClone(doc), version: this.nextVersion() });
  }

  private nextVersion(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}
