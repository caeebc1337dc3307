import {
  FIRESTORE_INDEXES,
  indexServing,
  recordingFirestore,
  type QueryShape,
} from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { FirestoreEvaluationStore } from './firestore-evaluation.store';
import { FirestoreScheduleStore } from './firestore-schedule.store';
import { FirestoreSignalStore } from './firestore-signal.store';

/**
 * Every query of the schedule, signal and evaluation stores must have a composite index in
 * deploy/firestore/firestore.indexes.json, or it fails on GCP with FAILED_PRECONDITION (the
 * emulator needs none). The shapes are recorded from the real adapters, not restated by hand.
 */

const OURS = ['flow_schedules', 'signals', 'evaluations'];

async function recordAll(): Promise<QueryShape[]> {
  const shapes: QueryShape[] = [];
  const firestore = recordingFirestore(shapes);
  const schedules = new FirestoreScheduleStore(firestore);
  const signals = new FirestoreSignalStore(firestore);
  await schedules.listByOwner({ ownerId: 'alice', limit: 5 });
  await schedules.listDue(new Date('2026-03-01T00:00:00Z'), 10);
  await signals.list({ ownerId: 'alice', limit: 5 });
  await signals.list({ ownerId: 'alice', symbolKey: 'BTCUSDT', limit: 5 });
  await new FirestoreEvaluationStore(firestore).list({ ownerId: 'alice', limit: 5 });
  return shapes;
}

describe('deploy/firestore/firestore.indexes.json covers the schedule, signal and evaluation queries', () => {
  it('records the queries of the adapters', async () => {
    expect(await recordAll()).toEqual([
      {
        collection: 'flow_schedules',
        equality: ['ownerId'],
        range: [],
        orderBy: [
          { field: 'createdAt', direction: 'desc' },
          { field: '__name__', direction: 'desc' },
        ],
      },
      {
        collection: 'flow_schedules',
        equality: ['enabled'],
        range: ['nextSlotAt'],
        orderBy: [
          { field: 'nextSlotAt', direction: 'asc' },
          { field: '__name__', direction: 'asc' },
        ],
      },
      {
        collection: 'signals',
        equality: ['ownerId'],
        range: [],
        orderBy: [
          { field: 'createdAt', direction: 'desc' },
          { field: '__name__', direction: 'desc' },
        ],
      },
      {
        collection: 'signals',
        equality: ['ownerId', 'symbolKey'],
        range: [],
        orderBy: [
          { field: 'createdAt', direction: 'desc' },
          { field: '__name__', direction: 'desc' },
        ],
      },
      {
        collection: 'evaluations',
        equality: ['ownerId'],
        range: [],
        orderBy: [
          { field: 'createdAt', direction: 'desc' },
          { field: '__name__', direction: 'desc' },
        ],
      },
    ]);
  });

  it('has an exact index for each, and none of these collections without a query', async () => {
    const shapes = await recordAll();
    const used = shapes.map((shape) => {
      // A range filter is only servable on the first ordered field.
      expect(shape.range.every((f) => shape.orderBy[0]?.field === f)).toBe(true);
      const index = indexServing(shape);
      expect(index, JSON.stringify(shape)).toBeDefined();
      return index;
    });
    const ours = FIRESTORE_INDEXES.filter((i) => OURS.includes(i.collectionGroup));
    expect(ours.filter((i) => !used.includes(i))).toEqual([]);
  });
});
