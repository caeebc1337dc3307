import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FlowRun } from '@tda/contracts';
import { type RunPatch, applyPatchShared, deepFreeze, isStorageSafeStepId } from '@tda/flow-engine';
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
import {
  isRunId,
  patchedRunIsValid,
  prepareNewRun,
  prepareRunPatch,
  readRunDocumentStrictly,
} from './run-document';
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
  /** Raw stored document, frozen: normally a FlowRun, but seedRawDocument may store anything. */
  doc: Record<string, unknown>;
  version: string;
  /** The document as read (lenient validation), once a read has validated this version. */
  read?: FlowRun;
  /** Whether `read` met the contract strictly: a write on it may then be validated in part. */
  strict?: boolean;
}

/**
 * FlowRunStore kept in process memory (TDA_BACKEND=memory and unit tests), with the semantics of
 * the Firestore adapter: conditional updates on an opaque version (a counter), create-only
 * creates, lenient reads, the same list order and cursor. Stored documents are immutable
 * snapshots (deep-frozen; a write makes a new one that shares its unchanged branches), handed out
 * as they are: callers can never mutate stored state — an attempt throws — and a read costs no
 * copy, and no validation when the version was read before (issue 16: copies and re-validation
 * were most of the embedded backend's per-step cost). Every method yields to the event loop
 * before touching the map, so concurrent callers really interleave in tests.
 */
export class InMemoryFlowRunStore implements FlowRunStore, RunChangeFeed, StepCheckpointStore {
  private readonly docs = new Map<string, Entry>();
  /**
   * Run ids by stored status: the admission's counts and PENDING list read one status, and a scan
   * of every run made each trigger slower the longer the process had run (issue 16).
   */
  private readonly byStatus = new Map<unknown, Set<string>>();
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
    const frozen = deepFreeze(doc);
    this.put(doc.runId, { doc: frozen, version, read: frozen, strict: true });
    this.notify(frozen);
    return { run: frozen, version };
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
    if (entry === undefined || !guard(this.read(runId, entry))) {
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
    return { run: this.read(runId, entry), version: entry.version };
  }

  async update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    const stored = prepareRunPatch(runId, patch, this.clock());
    await nextTurn();
    const entry = isRunId(runId) ? this.docs.get(runId) : undefined;
    if (entry === undefined) throw new RunNotFoundError(runId);
    if (entry.version !== expectedVersion) throw new VersionConflictError(runId, expectedVersion);
    const next = applyPatchShared(entry.doc as FlowRun, stored);
    const version = this.nextVersion();
    const valid = entry.strict === true && patchedRunIsValid(next, stored);
    this.put(runId, {
      doc: next as Record<string, unknown>,
      version,
      ...(valid ? { read: next, strict: true } : {}),
    });
    this.notify(next);
    return { run: next, version };
  }

  watchRun(
    runId: string,
    onRun: (run: FlowRun | null) => void,
    _onError: (error: Error) => void,
  ): RunFeedSubscription {
    const watcher = (run: FlowRun): void => {
      if (run.runId === runId) onRun(run);
    };
    return this.subscribe(watcher, () => {
      const entry = this.docs.get(runId);
      onRun(entry === undefined ? null : this.read(runId, entry));
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
      if (matches(run)) onRuns([run]);
    };
    return this.subscribe(watcher, () => {
      const runs = [...this.docs.entries()]
        .map(([id, entry]) => this.read(id, entry))
        .filter(matches);
      onRuns(runs);
    });
  }

  /** Listeners hear of a write on a later turn, as a snapshot listener would. */
  private notify(run: FlowRun): void {
    if (this.watchers.size === 0) return;
    setImmediate(() => {
      for (const watcher of this.watchers) watcher(run);
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
    for (const [, { doc }] of this.withStatus(query.status)) {
      if (query.ownerId === undefined || doc['ownerId'] === query.ownerId) n += 1;
    }
    return n;
  }

  async list(query: RunListQuery): Promise<RunListPage> {
    const { limit, after, filters } = validateListQuery(query);
    await nextTurn();
    const matching = [...this.withStatus(filters.status)]
      // Firestore's orderBy('createdAt') leaves out documents without the field.
      .filter(([, { doc }]) => doc['createdAt'] !== undefined)
      .filter(([, { doc }]) =>
        Object.entries(filters).every(([field, value]) => fieldAt(doc, field) === value),
      )
      .map(([runId, entry]) => ({ runId, createdAt: String(entry.doc['createdAt']), entry }))
      .filter((item) => after === null || compareListPosition(item, after) > 0)
      .sort(compareListPosition)
      .slice(0, limit + 1);
    const runs = matching.map(({ runId, entry }) => this.read(runId, entry));
    return toPage(runs, limit);
  }

  /**
   * Stores a document as is, without validation or stamping, the way a foreign or older writer
   * could have left it in Firestore. For tests of the lenient read path only.
   */
  async seedRawDocument(runId: string, doc: Record<string, unknown>): Promise<void> {
    await nextTurn();
    this.put(runId, { doc: deepFreeze(structuredClone(doc)), version: this.nextVersion() });
  }

  /**
   * The lenient read of an entry's document, validated once per version (or, after a write,
   * in part: patchedRunIsValid).
   */
  private read(runId: string, entry: Entry): FlowRun {
    if (entry.read === undefined) {
      const { run, strict } = readRunDocumentStrictly(runId, entry.doc);
      entry.read = run;
      entry.strict = strict;
    }
    return entry.read;
  }

  /** Stores `entry` as `runId`'s current version, keeping the status index. */
  private put(runId: string, entry: Entry): void {
    const before = this.docs.get(runId);
    this.docs.set(runId, entry);
    const status = entry.doc['status'];
    if (before !== undefined && before.doc['status'] === status) return;
    if (before !== undefined) this.byStatus.get(before.doc['status'])?.delete(runId);
    const ids = this.byStatus.get(status);
    if (ids === undefined) this.byStatus.set(status, new Set([runId]));
    else ids.add(runId);
  }

  /** The runs stored with `status` (every run when undefined). */
  private *withStatus(status: string | undefined): Iterable<[string, Entry]> {
    if (status === undefined) {
      yield* this.docs.entries();
      return;
    }
    for (const runId of this.byStatus.get(status) ?? []) {
      const entry = this.docs.get(runId);
      if (entry !== undefined) yield [runId, entry];
    }
  }

  private nextVersion(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}
