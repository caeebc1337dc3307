import type { FlowRun } from '@tda/contracts';
import type { RunPatch } from '@tda/flow-engine';
import type {
  FlowRunStore,
  RunListPage,
  RunCountQuery,
  RunListQuery,
  VersionedRun,
} from '@tda/flow-store';

/** One update that reached the wrapped store (successful or not). */
export interface RecordedUpdate {
  runId: string;
  patch: RunPatch;
  ok: boolean;
  /** performance.now() when the update was issued. */
  at: number;
}

/**
 * A FlowRunStore decorator that counts every call and records every patch, so tests can assert
 * "zero writes" or "exactly one finalize" by counting instead of by inspecting end states. It
 * can also fail the next N gets/updates (store unavailable) to exercise nack paths.
 */
export class CountingFlowRunStore implements FlowRunStore {
  creates = 0;
  gets = 0;
  /** Update calls, including those that failed with a version conflict. */
  updates = 0;
  lists = 0;
  /** count() queries. */
  counts = 0;
  readonly recorded: RecordedUpdate[] = [];
  private failGets: Error[] = [];
  private failUpdates: Error[] = [];
  private beforeUpdate: (() => Promise<void>) | undefined;

  constructor(readonly inner: FlowRunStore) {}

  /** Successful updates (writes that changed the document). */
  get writes(): number {
    return this.recorded.filter((u) => u.ok).length;
  }

  /** Successful patches touching `steps.<stepId>.status`, with the status they wrote. */
  statusWrites(stepId: string): unknown[] {
    const path = `steps.${stepId}.status`;
    return this.recorded.filter((u) => u.ok && path in u.patch).map((u) => u.patch[path]);
  }

  /** The next `count` get() calls throw `error`. */
  failNextGets(count: number, error: Error = new Error('store unavailable')): void {
    this.failGets.push(...Array.from({ length: count }, () => error));
  }

  /** The next `count` update() calls throw `error` before reaching the store. */
  failNextUpdates(count: number, error: Error = new Error('store unavailable')): void {
    this.failUpdates.push(...Array.from({ length: count }, () => error));
  }

  /**
   * Runs `hook` once, just before the next update reaches the store (after its read): a
   * concurrent writer landing between another writer's read and write.
   */
  onceBeforeNextUpdate(hook: () => Promise<void>): void {
    this.beforeUpdate = hook;
  }

  resetCounts(): void {
    this.creates = 0;
    this.gets = 0;
    this.updates = 0;
    this.lists = 0;
    this.counts = 0;
    this.recorded.length = 0;
  }

  create(run: FlowRun): Promise<VersionedRun> {
    this.creates += 1;
    return this.inner.create(run);
  }

  async get(runId: string): Promise<VersionedRun | null> {
    this.gets += 1;
    const failure = this.failGets.shift();
    if (failure !== undefined) throw failure;
    return this.inner.get(runId);
  }

  async update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    this.updates += 1;
    const at = performance.now();
    const failure = this.failUpdates.shift();
    if (failure !== undefined) throw failure;
    const hook = this.beforeUpdate;
    this.beforeUpdate = undefined;
    if (hook !== undefined) await hook();
    try {
      const written = await this.inner.update(runId, patch, expectedVersion);
      this.recorded.push({ runId, patch, ok: true, at });
      return written;
    } catch (error) {
      this.recorded.push({ runId, patch, ok: false, at });
      throw error;
    }
  }

  list(query: RunListQuery): Promise<RunListPage> {
    this.lists += 1;
    return this.inner.list(query);
  }

  count(query: RunCountQuery): Promise<number> {
    this.counts += 1;
    return this.inner.count(query);
  }
}
