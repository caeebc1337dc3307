import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FlowRun } from '@tda/contracts';
import { type RunPatch, applyPatch } from '@tda/flow-engine';
import { RunAlreadyExistsError, RunNotFoundError, VersionConflictError } from './flow-store.errors';
import type { FlowRunStore, RunListPage, RunListQuery, VersionedRun } from './flow-run-store.port';
import { isRunId, prepareNewRun, prepareRunPatch, readRunDocument } from './run-document';
import { compareListPosition, toPage, validateListQuery } from './run-list';

export interface InMemoryFlowRunStoreOptions {
  /** Source of `updatedAt` stamps. */
  clock?: () => Date;
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
export class InMemoryFlowRunStore implements FlowRunStore {
  private readonly docs = new Map<string, Entry>();
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
    this.docs.set(doc.runId, { doc: structuredClone(doc), version });
    return { run: doc, version };
  }

  async get(runId: string): Promise<VersionedRun | null> {
    await nextTurn();
    const entry = isRunId(runId) ? this.docs.get(runId) : undefined;
    if (entry === undefined) return null;
    return { run: readRunDocument(runId, structuredClone(entry.doc)), version: entry.version };
  }

  async update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    const stored = prepareRunPatch(runId, patch, this.clock());
    await nextTurn();
    const entry = isRunId(runId) ? this.docs.get(runId) : undefined;
    if (entry === undefined) throw new RunNotFoundError(runId);
    if (entry.version !== expectedVersion) throw new VersionConflictError(runId, expectedVersion);
    const next = applyPatch(entry.doc as FlowRun, stored);
    const version = this.nextVersion();
    this.docs.set(runId, { doc: next as Record<string, unknown>, version });
    return { run: structuredClone(next), version };
  }

  async list(query: RunListQuery): Promise<RunListPage> {
    const { limit, after, filters } = validateListQuery(query);
    await nextTurn();
    const matching = [...this.docs.entries()]
      // Firestore's orderBy('createdAt') leaves out documents without the field.
      .filter(([, { doc }]) => doc['createdAt'] !== undefined)
      .filter(([, { doc }]) =>
        Object.entries(filters).every(([field, value]) => doc[field] === value),
      )
      .map(([runId, { doc }]) => ({
        runId,
        createdAt: String(doc['createdAt']),
        doc,
      }))
      .filter((item) => after === null || compareListPosition(item, after) > 0)
      .sort(compareListPosition)
      .slice(0, limit + 1);
    const runs = matching.map(({ runId, doc }) => readRunDocument(runId, structuredClone(doc)));
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
