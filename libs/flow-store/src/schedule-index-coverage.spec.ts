import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FieldPath, type Firestore } from '@google-cloud/firestore';
import { describe, expect, it } from 'vitest';
import { FirestoreScheduleStore } from './firestore-schedule.store';
import { FirestoreSignalStore } from './firestore-signal.store';

/**
 * Every query of the schedule and signal stores must have a composite index in
 * deploy/firestore/firestore.indexes.json, or it fails on GCP with FAILED_PRECONDITION (the
 * emulator needs none). The shapes are recorded from the real adapters, not restated by hand.
 */

interface QueryShape {
  collection: string;
  equality: string[];
  range: string[];
  orderBy: { field: string; direction: string }[];
}

interface IndexSpec {
  collectionGroup: string;
  queryScope?: string;
  fields: { fieldPath: string; order?: string }[];
}

const INDEXES = (
  JSON.parse(
    readFileSync(join(__dirname, '../../../deploy/firestore/firestore.indexes.json'), 'utf8'),
  ) as { indexes: IndexSpec[] }
).indexes;
const OURS = ['flow_schedules', 'signals'];

function fieldName(field: unknown): string {
  if (field instanceof FieldPath) {
    return field.isEqual(FieldPath.documentId()) ? '__name__' : field.toString();
  }
  return String(field);
}

/** A Firestore whose queries record their shape and return no documents. */
function recordingFirestore(shapes: QueryShape[]): Firestore {
  const query = (shape: QueryShape): unknown => ({
    where: (field: unknown, op: string) => {
      if (op === '==') return query({ ...shape, equality: [...shape.equality, fieldName(field)] });
      if (op === '<=') return query({ ...shape, range: [...shape.range, fieldName(field)] });
      throw new Error(`unexpected operator ${op}: extend this test`);
    },
    orderBy: (field: unknown, direction = 'asc') =>
      query({ ...shape, orderBy: [...shape.orderBy, { field: fieldName(field), direction }] }),
    startAfter: () => query(shape),
    limit: () => query(shape),
    get: () => {
      shapes.push(shape);
      return Promise.resolve({ docs: [] });
    },
  });
  return {
    collection: (name: string) => query({ collection: name, equality: [], range: [], orderBy: [] }),
  } as unknown as Firestore;
}

const DIRECTION = { desc: 'DESCENDING', asc: 'ASCENDING' } as const;

/** The index serving the shape exactly: equality fields (any order), then the order (__name__ implied). */
function indexFor(shape: QueryShape): IndexSpec | undefined {
  const order = shape.orderBy.filter(
    (o, i, all) => !(o.field === '__name__' && i === all.length - 1),
  );
  return INDEXES.find((index) => {
    if (index.collectionGroup !== shape.collection) return false;
    if ((index.queryScope ?? 'COLLECTION') !== 'COLLECTION') return false;
    const head = index.fields.slice(0, shape.equality.length);
    const tail = index.fields.slice(shape.equality.length);
    return (
      head.every((f) => f.order === 'ASCENDING' && shape.equality.includes(f.fieldPath)) &&
      new Set(head.map((f) => f.fieldPath)).size === shape.equality.length &&
      tail.length === order.length &&
      tail.every(
        (f, i) =>
          f.fieldPath === order[i]?.field &&
          f.order === DIRECTION[order[i]?.direction as keyof typeof DIRECTION],
      )
    );
  });
}

async function recordAll(): Promise<QueryShape[]> {
  const shapes: QueryShape[] = [];
  const firestore = recordingFirestore(shapes);
  const schedules = new FirestoreScheduleStore(firestore);
  const signals = new FirestoreSignalStore(firestore);
  await schedules.listByOwner({ ownerId: 'alice', limit: 5 });
  await schedules.listDue(new Date('2026-03-01T00:00:00Z'), 10);
  await signals.list({ ownerId: 'alice', limit: 5 });
  await signals.list({ ownerId: 'alice', symbolKey: 'BTCUSDT', limit: 5 });
  return shapes;
}

describe('deploy/firestore/firestore.indexes.json covers the schedule and signal queries', () => {
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
    ]);
  });

  it('has an exact index for each, and none of these collections without a query', async () => {
    const shapes = await recordAll();
    const used = shapes.map((shape) => {
      // A range filter is only servable on the first ordered field.
      expect(shape.range.every((f) => shape.orderBy[0]?.field === f)).toBe(true);
      const index = indexFor(shape);
      expect(index, JSON.stringify(shape)).toBeDefined();
      return index;
    });
    const ours = INDEXES.filter((i) => OURS.includes(i.collectionGroup));
    expect(ours.filter((i) => !used.includes(i))).toEqual([]);
  });
});
