import { rejectionOf } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidScheduleError,
  InvalidScheduleListQueryError,
  InvalidStoredDocumentError,
  ScheduleAlreadyExistsError,
  ScheduleNotFoundError,
  ScheduleVersionConflictError,
} from '../schedule-store.errors';
import type { ScheduleStore } from '../schedule-store.port';
import { makeStoredSchedule, scheduleIdOf } from './schedule.fixtures';

export interface ScheduleConformanceContext {
  /** The clock the store must stamp updatedAt from; the suite moves it. */
  clock: () => Date;
}

export interface ScheduleStoreHandle {
  store: ScheduleStore;
  cleanup: () => Promise<void>;
  /** Writes a document to the backing storage without validation, as a foreign writer could. */
  seedRawDocument: (scheduleId: string, doc: Record<string, unknown>) => Promise<void>;
}

const T0 = Date.parse('2026-09-01T08:00:00.000Z');
const ID = scheduleIdOf(1);

interface Current {
  store: ScheduleStore;
  handle: ScheduleStoreHandle;
  setNow: (ms: number) => void;
}

/**
 * The semantics every ScheduleStore adapter shares (schedule-store.port.ts), run against the
 * in-memory adapter in a unit spec and against Firestore on the emulator in an int-spec.
 */
export function describeScheduleStoreConformance(
  name: string,
  open: (context: ScheduleConformanceContext) => Promise<ScheduleStoreHandle>,
): void {
  describe(`ScheduleStore conformance: ${name}`, () => {
    let now = T0;
    let handle: ScheduleStoreHandle;
    const current = (): Current => ({
      store: handle.store,
      handle,
      setNow: (ms) => {
        now = ms;
      },
    });

    beforeEach(async () => {
      now = T0;
      handle = await open({ clock: () => new Date(now) });
    });
    afterEach(async () => {
      await handle.cleanup();
    });

    describeCreateAndGet(current);
    describeUpdateAndDelete(current);
    describeLists(current);
  });
}

function describeCreateAndGet(current: () => Current): void {
  it('create writes the document as given; get returns it with the same version', async () => {
    const { store } = current();
    const schedule = makeStoredSchedule(1, { minSignalStrength: 0.6 });
    const created = await store.create(schedule);
    expect(created.schedule).toEqual(schedule);
    expect(typeof created.version).toBe('string');
    expect(await store.get(ID)).toEqual(created);
  });

  it('create is create-only, across owners too', async () => {
    const { store } = current();
    const created = await store.create(makeStoredSchedule(1));
    const again = await rejectionOf(store.create(makeStoredSchedule(1, { ownerId: 'bob' })));
    expect(again).toBeInstanceOf(ScheduleAlreadyExistsError);
    expect(await store.get(ID)).toEqual(created);
  });

  it.each([
    ['a cron that is not 5 fields', { cron: 'every day' }],
    ['a malformed id', { scheduleId: 'sch_nope' }],
    ['a scope with asOf', { scope: { symbol: 'BTC-USDT', asOf: '2026-01-01T00:00:00Z' } }],
    ['a paused schedule with nextSlotAt', { enabled: false }],
    ['a threshold above 1', { minSignalStrength: 1.5 }],
  ] as const)('create refuses %s and writes nothing', async (_case, overrides) => {
    const { store } = current();
    const error = await rejectionOf(store.create(makeStoredSchedule(1, overrides)));
    expect(error).toBeInstanceOf(InvalidScheduleError);
    expect(error).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(await store.get(ID)).toBeNull();
  });

  it('get: unknown and malformed ids are null; extra stored fields are tolerated', async () => {
    const { store, handle } = current();
    expect(await store.get(ID)).toBeNull();
    expect(await store.get('../etc')).toBeNull();
    const raw = scheduleIdOf(7);
    await handle.seedRawDocument(raw, { ...makeStoredSchedule(7), extra: { a: 1 } });
    expect((await store.get(raw))?.schedule).toMatchObject({ scheduleId: raw, extra: { a: 1 } });
  });

  it('get: a stored document that breaks the schema is InvalidStoredDocumentError', async () => {
    const { store, handle } = current();
    await handle.seedRawDocument(ID, { scheduleId: ID, ownerId: 'alice' });
    const error = await rejectionOf(store.get(ID));
    expect(error).toBeInstanceOf(InvalidStoredDocumentError);
    expect(error).toMatchObject({ code: 'INTERNAL_ERROR' });
  });
}

function describeUpdateAndDelete(current: () => Current): void {
  it('update replaces and removes fields on the current version and stamps updatedAt', async () => {
    const { store, setNow } = current();
    const created = await store.create(
      makeStoredSchedule(1, {
        minSignalStrength: 0.5,
        lastFire: {
          slotAt: '2026-03-01T00:05:00.000Z',
          outcome: 'fired',
          at: '2026-03-01T00:05:01.000Z',
        },
      }),
    );
    setNow(T0 + 60_000);
    const updated = await store.update(
      ID,
      {
        enabled: false,
        nextSlotAt: null,
        minSignalStrength: null,
        lastSlotAt: '2026-03-01T00:10:00.000Z',
        lastFire: {
          slotAt: '2026-03-01T00:10:00.000Z',
          outcome: 'skipped_overlap',
          at: '2026-03-01T00:10:02.000Z',
        },
      },
      created.version,
    );
    expect(updated.version).not.toBe(created.version);
    expect(updated.schedule).toMatchObject({
      enabled: false,
      lastSlotAt: '2026-03-01T00:10:00.000Z',
      createdAt: created.schedule.createdAt,
      updatedAt: '2026-09-01T08:01:00.000Z',
    });
    expect(updated.schedule).not.toHaveProperty('nextSlotAt');
    expect(updated.schedule).not.toHaveProperty('minSignalStrength');
    // A replaced map keeps nothing of the old one.
    expect(updated.schedule.lastFire).toEqual({
      slotAt: '2026-03-01T00:10:00.000Z',
      outcome: 'skipped_overlap',
      at: '2026-03-01T00:10:02.000Z',
    });
    expect(await store.get(ID)).toEqual(updated);
  });

  it('update on a stale version, a missing schedule or to an invalid state writes nothing', async () => {
    const { store } = current();
    const created = await store.create(makeStoredSchedule(1));
    const first = await store.update(ID, { description: 'first' }, created.version);
    const stale = await rejectionOf(store.update(ID, { description: 'x' }, created.version));
    expect(stale).toBeInstanceOf(ScheduleVersionConflictError);
    expect(stale).toMatchObject({ code: 'CONFLICT', retryable: true });
    const missing = await rejectionOf(
      store.update(scheduleIdOf(9), { enabled: true }, first.version),
    );
    expect(missing).toBeInstanceOf(ScheduleNotFoundError);
    const invalid = await rejectionOf(store.update(ID, { enabled: false }, first.version));
    expect(invalid).toBeInstanceOf(InvalidScheduleError);
    expect(await store.get(ID)).toEqual(first);
  });

  it('two tickers writing the cursor from the same version: exactly one wins', async () => {
    const { store } = current();
    const created = await store.create(makeStoredSchedule(1));
    const write = (slot: string) =>
      store.update(
        ID,
        { lastSlotAt: slot, nextSlotAt: '2026-03-01T00:15:00.000Z' },
        created.version,
      );
    const outcomes = await Promise.allSettled([
      write('2026-03-01T00:05:00.000Z'),
      write('2026-03-01T00:10:00.000Z'),
    ]);
    const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(ScheduleVersionConflictError);
    expect((await store.get(ID))?.schedule.lastSlotAt).toBe(won[0]?.schedule.lastSlotAt);
  });

  it('delete is conditional on the version; the id is free again afterwards', async () => {
    const { store } = current();
    const created = await store.create(makeStoredSchedule(1));
    const updated = await store.update(ID, { description: 'renamed' }, created.version);
    expect(await rejectionOf(store.delete(ID, created.version))).toBeInstanceOf(
      ScheduleVersionConflictError,
    );
    expect(await store.get(ID)).not.toBeNull();
    await store.delete(ID, updated.version);
    expect(await store.get(ID)).toBeNull();
    expect(await rejectionOf(store.delete(ID, updated.version))).toBeInstanceOf(
      ScheduleNotFoundError,
    );
    await store.create(makeStoredSchedule(1));
  });
}

function describeLists(current: () => Current): void {
  it('listByOwner: createdAt desc then id desc, keyset pages without repeats or gaps', async () => {
    const { store } = current();
    const at = (minute: number) => `2026-03-01T00:${String(minute).padStart(2, '0')}:00.000Z`;
    // ids 1..5; 2 and 3 share a createdAt (the id breaks the tie, descending)
    const created = [at(1), at(3), at(3), at(2), at(5)];
    for (const [i, createdAt] of created.entries()) {
      await store.create(makeStoredSchedule(i + 1, { createdAt, updatedAt: createdAt }));
    }
    await store.create(makeStoredSchedule(6, { ownerId: 'bob', createdAt: at(4) }));
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard += 1) {
      const page = await store.listByOwner({
        ownerId: 'alice',
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      });
      pages.push(page.schedules.map((s) => s.scheduleId.slice(-1)));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(pages).toEqual([['5', '3'], ['2', '4'], ['1']]);
    expect((await store.listByOwner({ ownerId: 'bob', limit: 10 })).schedules).toHaveLength(1);
    expect(await store.listByOwner({ ownerId: 'nobody', limit: 10 })).toEqual({
      schedules: [],
      nextCursor: null,
    });
  });

  it('listByOwner: a bad limit or a foreign cursor is InvalidScheduleListQueryError', async () => {
    const { store } = current();
    for (const query of [
      { ownerId: 'alice', limit: 0 },
      { ownerId: 'alice', limit: 101 },
      { ownerId: 'alice', limit: 5, cursor: 'not-a-cursor' },
      { ownerId: '', limit: 5 },
    ]) {
      expect(await rejectionOf(store.listByOwner(query))).toBeInstanceOf(
        InvalidScheduleListQueryError,
      );
    }
  });

  it('listDue: enabled with nextSlotAt <= now, oldest first, with usable versions', async () => {
    const { store } = current();
    const due = (n: number, nextSlotAt: string, extra = {}) =>
      store.create(makeStoredSchedule(n, { nextSlotAt, ...extra }));
    await due(1, '2026-03-01T00:10:00.000Z');
    await due(2, '2026-03-01T00:05:00.000Z');
    await due(3, '2026-03-01T00:10:00.000Z', { ownerId: 'bob' });
    await due(4, '2026-03-01T00:10:00.001Z'); // just after now
    await store.create(makeStoredSchedule(5, { enabled: false, nextSlotAt: undefined }));
    const now = new Date('2026-03-01T00:10:00.000Z');
    const found = await store.listDue(now, 10);
    expect(found.map((f) => f.schedule.scheduleId)).toEqual([
      scheduleIdOf(2),
      scheduleIdOf(1),
      scheduleIdOf(3),
    ]);
    expect((await store.listDue(now, 1)).map((f) => f.schedule.scheduleId)).toEqual([
      scheduleIdOf(2),
    ]);
    const [first] = found;
    if (first === undefined) throw new Error('nothing due');
    await store.update(
      first.schedule.scheduleId,
      { nextSlotAt: '2026-03-01T00:15:00.000Z' },
      first.version,
    );
    expect((await store.listDue(now, 10)).map((f) => f.schedule.scheduleId)).toEqual([
      scheduleIdOf(1),
      scheduleIdOf(3),
    ]);
    expect(await rejectionOf(store.listDue(now, 0))).toBeInstanceOf(InvalidScheduleListQueryError);
  });
}
