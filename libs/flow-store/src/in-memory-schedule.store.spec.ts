import { describe, expect, it } from 'vitest';
import { InMemoryScheduleStore } from './in-memory-schedule.store';
import { InMemorySignalStore } from './in-memory-signal.store';
import {
  describeScheduleStoreConformance,
  describeSignalStoreConformance,
  makeSignal,
  makeStoredSchedule,
} from './testing';

describeScheduleStoreConformance('in-memory', async ({ clock }) => {
  const store = new InMemoryScheduleStore({ clock });
  return {
    store,
    cleanup: async () => undefined,
    seedRawDocument: async (id, doc) => store.seedRawDocument(id, doc),
  };
});

describeSignalStoreConformance('in-memory', async () => {
  const store = new InMemorySignalStore();
  return {
    store,
    cleanup: async () => undefined,
    seedRawDocument: async (id, doc) => store.seedRawDocument(id, doc),
  };
});

describe('in-memory schedule and signal stores', () => {
  it('hand out copies: mutating a returned document changes nothing stored', async () => {
    const schedules = new InMemoryScheduleStore();
    const created = await schedules.create(makeStoredSchedule(1));
    created.schedule.scope.symbol = 'ETH-USDT';
    expect((await schedules.get(created.schedule.scheduleId))?.schedule.scope.symbol).toBe(
      'BTC-USDT',
    );
    const signals = new InMemorySignalStore();
    const signal = makeSignal();
    await signals.createOnce(signal);
    const read = await signals.get(signal.signalId);
    if (read === null) throw new Error('missing');
    read.headline = 'changed';
    expect((await signals.get(signal.signalId))?.headline).toBe(signal.headline);
  });
});
