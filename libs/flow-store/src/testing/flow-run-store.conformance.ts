import type { FlowRun, RunStatus } from '@tda/contracts';
import { FIELD_DELETE, type RunPatch, applyPatch, stepPatch } from '@tda/flow-engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateWithRetry } from '../conditional-update';
import {
  InvalidCursorError,
  InvalidListQueryError,
  InvalidRunDocumentError,
  InvalidRunPatchError,
  RunAlreadyExistsError,
  RunNotFoundError,
  VersionConflictError,
} from '../flow-store.errors';
import type { FlowRunStore, RunListQuery, VersionedRun } from '../flow-run-store.port';
import { makeFlowRun, makeParallelSteps, makeStep } from './flow-run.fixtures';

export interface ConformanceContext {
  /** The clock the store must stamp `updatedAt` from; the suite moves it. */
  clock: () => Date;
}

export interface ConformanceStoreHandle {
  store: FlowRunStore;
  cleanup: () => Promise<void>;
  /**
   * Writes a document to the store's backing storage without validation or stamping, as a
   * foreign or older writer could have left it. The lenient-read cases need it.
   */
  seedRawDocument: (runId: string, doc: Record<string, unknown>) => Promise<void>;
}

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (offsetMs: number): string => new Date(T0 + offsetMs).toISOString();
const MINUTE = 60_000;

/** A run created `minutes` after T0 (negative: before), distinguished by `suffix`. */
function runAt(minutes: number, suffix: string, overrides: Partial<FlowRun> = {}): FlowRun {
  return makeFlowRun({ createdAt: iso(minutes * MINUTE), suffix, ...overrides });
}

async function expectRejection<E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  const outcome = await promise.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a ${type.name}, but the call succeeded`);
  expect(outcome.error).toBeInstanceOf(type);
  return outcome.error as E;
}

/**
 * Follows nextCursor to the end and returns the runIds of each page. `duringLaterPages` runs
 * concurrently with every fetch after the first one.
 */
async function listAll(
  store: FlowRunStore,
  query: Omit<RunListQuery, 'cursor'>,
  duringLaterPages: () => Promise<unknown> = async () => undefined,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard += 1) {
    const [page] = await Promise.all([
      store.list({ ...query, cursor }),
      cursor === undefined ? undefined : duringLaterPages(),
    ]);
    pages.push(page.runs.map((r) => r.runId));
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
  throw new Error('pagination did not terminate');
}

/**
 * Holds the first `parties` calls of `get` until all of them have been answered, so every party
 * reads the same version before anyone writes: a real race on every run, not a lucky one.
 */
function withReadBarrier(store: FlowRunStore, parties: number): FlowRunStore {
  let waiting: Array<() => void> = [];
  let arrived = 0;
  return {
    create: (run) => store.create(run),
    update: (runId, patch, version) => store.update(runId, patch, version),
    list: (query) => store.list(query),
    count: (query) => store.count(query),
    get: async (runId) => {
      const result = await store.get(runId);
      arrived += 1;
      if (arrived < parties) {
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else if (arrived === parties) {
        for (const release of waiting) release();
        waiting = [];
      }
      return result;
    },
  };
}

/**
 * The behaviour every FlowRunStore adapter must have (see flow-run-store.port.ts). Registers a
 * vitest `describe` block; `makeStore` is called before each test and must return an empty store
 * that stamps `updatedAt` from `context.clock`.
 */
export function describeFlowRunStoreConformance(
  name: string,
  makeStore: (context: ConformanceContext) => Promise<ConformanceStoreHandle>,
): void {
  describe(`FlowRunStore conformance: ${name}`, () => {
    let now = T0;
    const clock = (): Date => new Date(now);
    let handle: ConformanceStoreHandle | undefined;
    let store: FlowRunStore;

    beforeEach(async () => {
      now = T0 + 24 * 60 * MINUTE;
      handle = await makeStore({ clock });
      store = handle.store;
    });

    afterEach(async () => {
      await handle?.cleanup();
      handle = undefined;
    });

    const tick = (): string => {
      now += 1_000;
      return new Date(now).toISOString();
    };

    describe('create and get', () => {
      it('round-trips the run, stamping updatedAt from the clock', async () => {
        const run = makeFlowRun({ idempotencyKey: 'idem-1', scope: { symbol: 'ETH/USDT' } });
        const stampedAt = tick();
        const created = await store.create(run);
        expect(created.run).toEqual({ ...run, updatedAt: stampedAt });
        expect(typeof created.version).toBe('string');
        expect(created.version).not.toBe('');

        const read = await store.get(run.runId);
        expect(read).toEqual(created);
      });

      it('returns null for a run that does not exist', async () => {
        expect(await store.get(makeFlowRun({ suffix: 'none' }).runId)).toBeNull();
      });

      it('treats ids that are not RunIds as not found (never as storage paths)', async () => {
        const created = await store.create(makeFlowRun());
        const runId = created.run.runId;
        for (const id of ['', '..', `${runId}/steps/x`, '__name__', 'flow_runs']) {
          expect(await store.get(id)).toBeNull();
          await expectRejection(
            store.update(id, { ownerId: 'x' }, created.version),
            RunNotFoundError,
          );
        }
        expect(await store.get(runId)).toEqual(created);
      });

      it('rejects a second create of the same runId and keeps the first document', async () => {
        const first = await store.create(makeFlowRun({ ownerId: 'first' }));
        const error = await expectRejection(
          store.create(makeFlowRun({ ownerId: 'second' })),
          RunAlreadyExistsError,
        );
        expect(error.code).toBe('CONFLICT');
        expect(await store.get(first.run.runId)).toEqual(first);
      });

      it('rejects a document that breaks the schema and writes nothing', async () => {
        const missingSteps = { ...makeFlowRun(), steps: {} };
        const error = await expectRejection(store.create(missingSteps), InvalidRunDocumentError);
        expect(error.code).toBe('FLOW_RUN_INVALID');
        expect(error.issues.length).toBeGreaterThan(0);
        expect(await store.get(missingSteps.runId)).toBeNull();

        const badRunId = makeFlowRun({ runId: 'not a run id' });
        await expectRejection(store.create(badRunId), InvalidRunDocumentError);
      });

      it('rejects values that are not plain JSON (they would not read back the same)', async () => {
        const run = makeFlowRun({
          steps: { 'ohlcv_export:1d': makeStep({ inputs: { from: new Date(T0) } }) },
        });
        const error = await expectRejection(store.create(run), InvalidRunDocumentError);
        expect(JSON.stringify(error.issues)).toContain('Date');
        expect(await store.get(run.runId)).toBeNull();
      });

      it('drops undefined properties instead of storing them', async () => {
        const run = { ...makeFlowRun(), idempotencyKey: undefined, scope: { symbol: 'BTC-USDT' } };
        const created = await store.create(run);
        expect('idempotencyKey' in created.run).toBe(false);
        const read = await store.get(run.runId);
        expect(read?.run).toEqual(created.run);
        expect(read && 'idempotencyKey' in read.run).toBe(false);
      });

      it('never lets callers mutate stored state through inputs or results', async () => {
        const run = makeFlowRun();
        const created = await store.create(run);
        run.ownerId = 'mutated-input';
        // Results are read-only snapshots (frozen): writing to one throws, whatever the adapter.
        expect(() => {
          created.run.ownerId = 'mutated-result';
        }).toThrow(TypeError);
        const read = await store.get(run.runId);
        expect(read?.run.ownerId).toBe('user-1');
        if (read === null) throw new Error('run vanished');
        expect(() => {
          read.run.status = 'CANCELLED';
        }).toThrow(TypeError);

        const patch = { 'steps.ohlcv_export:1d.inputs': { list: [1, 2] } };
        const updated = await store.update(run.runId, patch, created.version);
        expect(updated.run.status).toBe('RUNNING');
        expect(updated.run.ownerId).toBe('user-1');
        // The patch's values are copied in: the caller's objects stay theirs.
        patch['steps.ohlcv_export:1d.inputs'].list.push(3);
        const inputs = updated.run.steps['ohlcv_export:1d']?.inputs;
        expect(() => {
          if (inputs !== undefined) inputs['list'] = 'mutated';
        }).toThrow(TypeError);
        const again = await store.get(run.runId);
        expect(again?.run.status).toBe('RUNNING');
        expect(again?.run.steps['ohlcv_export:1d']?.inputs).toEqual({ list: [1, 2] });
        expect(created.run.steps['ohlcv_export:1d']?.inputs).not.toEqual({ list: [1, 2] });
      });
    });

    describe('update', () => {
      it('applies the patch, stamps updatedAt and returns the new version and run', async () => {
        const created = await store.create(makeFlowRun());
        const patch: RunPatch = {
          ...stepPatch('ohlcv_export:1d', {
            status: 'RUNNING',
            attempt: 1,
            lease: { owner: 'worker-a', expiresAt: iso(10 * MINUTE) },
            'outputs.execution.timing.startedAt': iso(0),
          }),
          status: 'RUNNING',
        };
        const stampedAt = tick();
        const updated = await store.update(created.run.runId, patch, created.version);

        expect(updated.version).not.toBe(created.version);
        expect(updated.run).toEqual({
          ...applyPatch(created.run, patch),
          updatedAt: stampedAt,
        });
        expect(updated.run.steps['ohlcv_export:1d']?.outputs).toEqual({
          execution: { timing: { startedAt: iso(0) } },
        });
        expect(await store.get(created.run.runId)).toEqual(updated);
      });

      it("overrides a patch's own updatedAt with the store clock", async () => {
        const created = await store.create(makeFlowRun());
        const stampedAt = tick();
        const updated = await store.update(
          created.run.runId,
          { updatedAt: '1999-01-01T00:00:00Z', ownerId: 'user-2' },
          created.version,
        );
        expect(updated.run.updatedAt).toBe(stampedAt);
        expect((await store.get(created.run.runId))?.run.updatedAt).toBe(stampedAt);
      });

      it('rejects a stale version with VersionConflictError and writes nothing', async () => {
        const created = await store.create(makeFlowRun());
        const first = await store.update(
          created.run.runId,
          stepPatch('ohlcv_export:1d', { status: 'RUNNING' }),
          created.version,
        );
        const error = await expectRejection(
          store.update(created.run.runId, { status: 'CANCELLED' }, created.version),
          VersionConflictError,
        );
        expect(error.code).toBe('CONFLICT');
        expect(error.retryable).toBe(true);
        expect(await store.get(created.run.runId)).toEqual(first);
      });

      it('treats a version it never issued as a conflict', async () => {
        const created = await store.create(makeFlowRun());
        await expectRejection(
          store.update(created.run.runId, { status: 'CANCELLED' }, 'not-a-version'),
          VersionConflictError,
        );
        expect(await store.get(created.run.runId)).toEqual(created);
      });

      it('rejects an update of a missing run with RunNotFoundError', async () => {
        const other = await store.create(makeFlowRun({ suffix: 'other' }));
        const missing = makeFlowRun({ suffix: 'gone' }).runId;
        const error = await expectRejection(
          store.update(missing, { status: 'CANCELLED' }, other.version),
          RunNotFoundError,
        );
        expect(error.code).toBe('NOT_FOUND');
        expect(await store.get(missing)).toBeNull();
      });

      it('removes fields marked FIELD_DELETE (and ignores absent ones)', async () => {
        const created = await store.create(
          makeFlowRun({
            steps: {
              'ohlcv_export:1d': makeStep({
                status: 'RUNNING',
                attempt: 1,
                lease: { owner: 'worker-a', expiresAt: iso(MINUTE) },
              }),
            },
          }),
        );
        const updated = await store.update(
          created.run.runId,
          {
            'steps.ohlcv_export:1d.lease': FIELD_DELETE,
            'steps.ohlcv_export:1d.progress': FIELD_DELETE,
            'steps.ohlcv_export:1d.status': 'SUCCEEDED',
            idempotencyKey: FIELD_DELETE,
          },
          created.version,
        );
        const step = (await store.get(created.run.runId))?.run.steps['ohlcv_export:1d'];
        expect(step?.status).toBe('SUCCEEDED');
        expect(step !== undefined && 'lease' in step).toBe(false);
        expect('lease' in (updated.run.steps['ohlcv_export:1d'] ?? {})).toBe(false);
      });

      it('replaces a whole map when the patch addresses its parent path', async () => {
        const created = await store.create(
          makeFlowRun({
            steps: {
              'ohlcv_export:1d': makeStep({
                outputs: { signed_url: 'https://x', gcs_uri: 'gs://bucket-old/o' },
              }),
            },
          }),
        );
        const outputs = { gcs_uri: 'gs://bucket-a/runs/x/ohlcv.json' };
        const updated = await store.update(
          created.run.runId,
          { 'steps.ohlcv_export:1d.outputs': outputs },
          created.version,
        );
        const read = await store.get(created.run.runId);
        expect(read?.run.steps['ohlcv_export:1d']?.outputs).toEqual(outputs);
        expect(updated.run).toEqual(read?.run);
      });

      it('rejects patches that cannot be stored identically, writing nothing', async () => {
        const created = await store.create(makeFlowRun());
        const runId = created.run.runId;
        const invalid: RunPatch[] = [
          { 'steps.ohlcv_export:1d': makeStep(), 'steps.ohlcv_export:1d.status': 'RUNNING' },
          { 'steps..status': 'RUNNING' },
          { 'steps.ohlcv_export:1d.readyAt': new Date(T0) },
          { 'steps.ohlcv_export:1d.inputs': { nested: [[1, 2]] } },
          { 'steps.ohlcv_export:1d.inputs': { gone: FIELD_DELETE } },
          { 'steps.ohlcv_export:1d.attempt': Number.NaN },
        ];
        for (const patch of invalid) {
          const error = await expectRejection(
            store.update(runId, patch, created.version),
            InvalidRunPatchError,
          );
          expect(error.code).toBe('INVALID_REQUEST');
        }
        expect(await store.get(runId)).toEqual(created);
      });

      it('lets exactly one of two racing writers claim a step', async () => {
        const created = await store.create(makeFlowRun());
        const runId = created.run.runId;
        const [a, b] = await Promise.all([store.get(runId), store.get(runId)]);
        if (a === null || b === null) throw new Error('run vanished');
        expect(a.version).toBe(b.version);
        const claim = (owner: string, read: VersionedRun): Promise<VersionedRun> =>
          store.update(
            runId,
            stepPatch('ohlcv_export:1d', {
              status: 'RUNNING',
              attempt: (read.run.steps['ohlcv_export:1d']?.attempt ?? 0) + 1,
              lease: { owner, expiresAt: iso(MINUTE) },
            }),
            read.version,
          );
        const results = await Promise.allSettled([claim('worker-a', a), claim('worker-b', b)]);

        const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(lost[0]).toBeInstanceOf(VersionConflictError);
        const winner = won[0]?.run.steps['ohlcv_export:1d']?.lease?.owner;
        expect((await store.get(runId))?.run.steps['ohlcv_export:1d']?.lease?.owner).toBe(winner);
      });

      it('lands every concurrent writer of a different step through updateWithRetry', async () => {
        const writers = 8;
        const steps = makeParallelSteps(writers);
        const created = await store.create(makeFlowRun({ steps }));
        const runId = created.run.runId;
        const racing = withReadBarrier(store, writers);

        const outcomes = await Promise.all(
          Object.keys(steps).map((stepId, i) =>
            updateWithRetry(
              racing,
              runId,
              (run) =>
                run.steps[stepId]?.status === 'READY'
                  ? {
                      kind: 'write',
                      patch: stepPatch(stepId, {
                        status: 'RUNNING',
                        attempt: 1,
                        lease: { owner: `worker-${i}`, expiresAt: iso(MINUTE) },
                      }),
                      result: stepId,
                    }
                  : { kind: 'noop', reason: 'not_ready', result: stepId },
              // Each conflict means another writer landed, so nobody needs more than `writers`.
              { maxAttempts: writers },
            ),
          ),
        );

        expect(outcomes.map((o) => o.kind)).toEqual(Array(writers).fill('written'));
        const attempts = outcomes.reduce((sum, o) => sum + ('attempts' in o ? o.attempts : 0), 0);
        // Everyone read the same version first, so all but one lost at least once.
        expect(attempts).toBeGreaterThanOrEqual(2 * writers - 1);
        const final = await store.get(runId);
        Object.keys(steps).forEach((stepId, i) => {
          expect(final?.run.steps[stepId]?.status).toBe('RUNNING');
          expect(final?.run.steps[stepId]?.lease?.owner).toBe(`worker-${i}`);
        });
      });
    });

    describe('lenient reads', () => {
      it('tolerates and keeps unknown extra fields, also inside closed objects', async () => {
        const run = makeFlowRun({
          status: 'FAILED',
          error: { code: 'INTERNAL_ERROR', message: 'boom', retryable: false },
        });
        const raw = {
          ...run,
          legacyField: { any: 'thing' },
          error: { ...run.error, legacyHint: 'kept' },
          steps: {
            'ohlcv_export:1d': { ...makeStep(), prototypeOnly: true },
          },
        };
        await handle?.seedRawDocument(run.runId, raw);
        const read = await store.get(run.runId);
        expect(read?.run).toEqual(raw);
        const page = await store.list({ limit: 10 });
        expect(page.runs).toEqual([raw]);
      });

      it('rejects a stored document missing a required field', async () => {
        const run = makeFlowRun();
        const { ownerId: _ownerId, ...withoutOwner } = run;
        await handle?.seedRawDocument(run.runId, withoutOwner);
        const error = await expectRejection(store.get(run.runId), InvalidRunDocumentError);
        expect(error.code).toBe('FLOW_RUN_INVALID');
        expect(JSON.stringify(error.issues)).toContain('ownerId');
        await expectRejection(store.list({ limit: 10 }), InvalidRunDocumentError);
      });
    });

    describe('count', () => {
      it('counts the runs with a status, overall or of one owner, as they change', async () => {
        const a = runAt(1, 'aaa', { status: 'RUNNING', ownerId: 'alice' });
        const b = runAt(2, 'bbb', { status: 'RUNNING', ownerId: 'bob' });
        const c = runAt(3, 'ccc', { status: 'PENDING', ownerId: 'alice' });
        for (const run of [a, b, c]) await store.create(run);
        expect(await store.count({ status: 'RUNNING' })).toBe(2);
        expect(await store.count({ status: 'RUNNING', ownerId: 'alice' })).toBe(1);
        expect(await store.count({ status: 'PENDING', ownerId: 'bob' })).toBe(0);
        expect(await store.count({ status: 'SUCCEEDED' })).toBe(0);

        const read = await store.get(c.runId);
        if (read === null) throw new Error('run vanished');
        await store.update(c.runId, { status: 'RUNNING' }, read.version);
        expect(await store.count({ status: 'RUNNING', ownerId: 'alice' })).toBe(2);
        expect(await store.count({ status: 'PENDING' })).toBe(0);
      });
    });

    describe('list', () => {
      it('orders by createdAt desc, then runId desc', async () => {
        const runs = [
          runAt(1, 'aaa'),
          runAt(3, 'ccc'),
          runAt(2, 'bbb'),
          runAt(2, 'zzz'),
          runAt(2, 'mmm'),
          runAt(-5, 'old'),
        ];
        for (const run of runs) await store.create(run);
        const page = await store.list({ limit: 100 });
        expect(page.runs.map((r) => r.runId)).toEqual(
          [
            runAt(3, 'ccc'),
            runAt(2, 'zzz'),
            runAt(2, 'mmm'),
            runAt(2, 'bbb'),
            runAt(1, 'aaa'),
            runAt(-5, 'old'),
          ].map((r) => r.runId),
        );
        expect(page.nextCursor).toBeNull();
      });

      it('filters by status, flowKey, ownerId and idempotencyKey', async () => {
        const a = runAt(1, 'aaa', { status: 'RUNNING', flowKey: 'alpha_v1', ownerId: 'alice' });
        const b = runAt(2, 'bbb', { status: 'SUCCEEDED', flowKey: 'alpha_v1', ownerId: 'bob' });
        const c = runAt(3, 'ccc', { status: 'RUNNING', flowKey: 'beta_v1', ownerId: 'alice' });
        const d = runAt(4, 'ddd', {
          status: 'RUNNING',
          flowKey: 'alpha_v1',
          ownerId: 'alice',
          idempotencyKey: 'key-d',
        });
        for (const run of [a, b, c, d]) await store.create(run);
        const ids = async (query: RunListQuery): Promise<string[]> =>
          (await store.list(query)).runs.map((r) => r.runId);

        expect(await ids({ limit: 10, status: 'RUNNING' })).toEqual([d.runId, c.runId, a.runId]);
        expect(await ids({ limit: 10, flowKey: 'alpha_v1' })).toEqual([d.runId, b.runId, a.runId]);
        expect(await ids({ limit: 10, ownerId: 'bob' })).toEqual([b.runId]);
        expect(await ids({ limit: 10, idempotencyKey: 'key-d' })).toEqual([d.runId]);
        expect(
          await ids({ limit: 10, status: 'RUNNING', flowKey: 'alpha_v1', ownerId: 'alice' }),
        ).toEqual([d.runId, a.runId]);
        expect(await ids({ limit: 10, status: 'CANCELLED' })).toEqual([]);

        const firstPage = await store.list({ limit: 1, ownerId: 'alice' });
        expect(firstPage.runs.map((r) => r.runId)).toEqual([d.runId]);
        const rest = await listAll(store, { limit: 1, ownerId: 'alice' });
        expect(rest.flat()).toEqual([d.runId, c.runId, a.runId]);
      });

      it('lists a run under the status it has now, across status changes', async () => {
        const a = runAt(1, 'aaa', { status: 'PENDING' });
        const b = runAt(2, 'bbb', { status: 'PENDING' });
        for (const run of [a, b]) await store.create(run);
        const ids = async (status: RunStatus): Promise<string[]> =>
          (await store.list({ limit: 10, status })).runs.map((r) => r.runId);
        const move = async (runId: string, status: RunStatus): Promise<void> => {
          const read = await store.get(runId);
          if (read === null) throw new Error('run vanished');
          await store.update(runId, { status }, read.version);
        };

        await move(a.runId, 'RUNNING');
        expect(await ids('PENDING')).toEqual([b.runId]);
        expect(await ids('RUNNING')).toEqual([a.runId]);
        await move(a.runId, 'RUNNING');
        await move(b.runId, 'RUNNING');
        expect(await ids('RUNNING')).toEqual([b.runId, a.runId]);
        await move(a.runId, 'SUCCEEDED');
        expect(await ids('RUNNING')).toEqual([b.runId]);
        expect(await ids('SUCCEEDED')).toEqual([a.runId]);
        expect(await ids('PENDING')).toEqual([]);
        expect(await store.count({ status: 'RUNNING' })).toBe(1);
      });

      it('visits every run exactly once across pages', async () => {
        const runs = Array.from({ length: 11 }, (_, i) =>
          // pairs share a createdAt, so the runId tie-break decides page boundaries
          runAt(-Math.floor(i / 2), `r${String(i).padStart(2, '0')}x`),
        );
        for (const run of runs) await store.create(run);
        const expected = (await store.list({ limit: 100 })).runs.map((r) => r.runId);
        expect(expected).toHaveLength(runs.length);

        const pages = await listAll(store, { limit: 3 });
        expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 2]);
        expect(pages.flat()).toEqual(expected);

        const exact = await listAll(store, { limit: 11 });
        expect(exact).toEqual([expected]);
      });

      it('stays stable while newer runs are inserted between and during page fetches', async () => {
        const existing = Array.from({ length: 9 }, (_, i) => runAt(-Math.floor(i / 3), `e${i}xx`));
        for (const run of existing) await store.create(run);
        const expected = (await store.list({ limit: 100 })).runs.map((r) => r.runId);

        let inserted = 0;
        const insertNewer = async (): Promise<void> => {
          inserted += 1;
          // Newer than everything listed so far, and one that ties the newest createdAt with a
          // larger runId (it also sorts before every existing run).
          await Promise.all([
            store.create(runAt(10 + inserted, `n${inserted}xx`)),
            store.create(runAt(0, `z${inserted}zz`)),
          ]);
        };
        const pages = await listAll(store, { limit: 2 }, insertNewer);

        expect(pages.flat()).toEqual(expected);
        expect(inserted).toBe(4);
        const all = await store.list({ limit: 100 });
        expect(all.runs).toHaveLength(existing.length + 2 * inserted);
      });

      it('rejects malformed cursors and out-of-range limits', async () => {
        await store.create(runAt(0, 'aaa'));
        await store.create(runAt(1, 'bbb'));
        const { nextCursor } = await store.list({ limit: 1 });
        expect(nextCursor).not.toBeNull();

        const foreign = Buffer.from(JSON.stringify({ createdAt: iso(0), runId: 'x' })).toString(
          'base64url',
        );
        const badCursors = ['', 'not a cursor', '!!!', 'e30', foreign, `${nextCursor ?? ''}AA`];
        for (const cursor of badCursors) {
          const error = await expectRejection(store.list({ limit: 1, cursor }), InvalidCursorError);
          expect(error.code).toBe('INVALID_REQUEST');
        }
        for (const limit of [0, -1, 101, 1.5, Number.NaN]) {
          await expectRejection(store.list({ limit }), InvalidListQueryError);
        }
      });
    });
  });
}
