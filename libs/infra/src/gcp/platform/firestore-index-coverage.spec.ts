import { join } from 'node:path';
import { FieldPath, type Firestore } from '@google-cloud/firestore';
import { FirestoreFlowRunStore, type RunListQuery } from '@tda/flow-store';
import { describe, expect, it } from 'vitest';
import { loadFirestoreAssets } from './firestore-assets';

/**
 * Every query the Firestore flow-run store runs must have a composite index in
 * deploy/firestore/firestore.indexes.json, or it fails on GCP with FAILED_PRECONDITION (the
 * emulator needs no index, so no other test would notice). The shapes are recorded from the real
 * adapter (FirestoreFlowRunStore.list over a recording Firestore), not restated by hand.
 */

interface QueryShape {
  collection: string;
  equality: string[];
  orderBy: { field: string; direction: string }[];
  /** A range filter (>=): the live owner stream's updatedAt. */
  range?: string;
}

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
      if (op === '>=') return query({ ...shape, range: fieldName(field) });
      if (op !== '==') throw new Error(`unexpected operator ${op}: extend this test`);
      return query({ ...shape, equality: [...shape.equality, fieldName(field)] });
    },
    onSnapshot: () => {
      shapes.push(shape);
      return () => undefined;
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
    collection: (name: string) => query({ collection: name, equality: [], orderBy: [] }),
  } as unknown as Firestore;
}

/**
 * One value per list filter of RunListQuery: a filter added there without an entry here fails to
 * compile, so its query shape cannot be forgotten.
 */
const FILTERS = {
  status: 'RUNNING',
  flowKey: 'scheduled_month_week_report_v1',
  ownerId: 'alice',
  idempotencyKey: 'key-1',
  symbol: 'BTC-USDT',
} as const satisfies Required<Omit<RunListQuery, 'limit' | 'cursor'>>;
type Filter = keyof typeof FILTERS;

/**
 * The filter combinations the orchestrator itself runs, each of which gets an exact index (its
 * hot paths never depend on index merging):
 * - { status }: admission (run-admission.service.ts listAll), reconciler (reconciler.service.ts)
 * - { status, ownerId }: admission's per-owner count (run-admission.service.ts count)
 * - { ownerId, idempotencyKey }: the idempotency check (runs/idempotency-key.ts)
 * - {}: replay's scan (replay.service.ts scanRuns) — the automatic single-field index
 * GET /runs may combine any filters; those are served by merging the single-filter indexes.
 */
const ORCHESTRATOR_COMBINATIONS: Filter[][] = [
  [],
  ['status'],
  ['status', 'ownerId'],
  ['ownerId', 'idempotencyKey'],
];

function subsets<T>(items: readonly T[]): T[][] {
  return items.reduce<T[][]>((all, item) => [...all, ...all.map((s) => [...s, item])], [[]]);
}

async function shapeOf(filters: readonly Filter[]): Promise<QueryShape> {
  const shapes: QueryShape[] = [];
  const store = new FirestoreFlowRunStore(recordingFirestore(shapes));
  const query: RunListQuery = { limit: 10 };
  for (const f of filters) Object.assign(query, { [f]: FILTERS[f] });
  await store.list(query);
  const [shape] = shapes;
  if (shape === undefined || shapes.length !== 1) throw new Error('expected one query');
  return shape;
}

const DESC = { desc: 'DESCENDING', asc: 'ASCENDING' } as const;

/** ownerId == x and updatedAt >= since (FirestoreFlowRunStore.watchOwner). */
const WATCH_OWNER_INDEX = {
  collectionGroup: 'flow_runs',
  queryScope: 'COLLECTION',
  fields: [
    { fieldPath: 'ownerId', order: 'ASCENDING' },
    { fieldPath: 'updatedAt', order: 'ASCENDING' },
  ],
};

describe('deploy/firestore/firestore.indexes.json covers the flow-store queries', () => {
  const { indexes } = loadFirestoreAssets(
    join(__dirname, '../../../../../deploy/firestore'),
  ).indexes;

  /** An index serving `equality` == filters ordered by `orderBy` (equality fields in any order). */
  function hasIndex(shape: QueryShape, equality: readonly string[]): boolean {
    const order = shape.orderBy.filter(
      // __name__ in the last field's direction is implied by every index
      (o, i, all) =>
        !(
          o.field === '__name__' &&
          i === all.length - 1 &&
          i > 0 &&
          all[i - 1]?.direction === o.direction
        ),
    );
    return indexes.some((index) => {
      if (index.collectionGroup !== shape.collection || index.queryScope !== 'COLLECTION')
        return false;
      const head = index.fields.slice(0, equality.length);
      const tail = index.fields.slice(equality.length);
      return (
        head.every((f) => f.order !== undefined && equality.includes(f.fieldPath)) &&
        new Set(head.map((f) => f.fieldPath)).size === equality.length &&
        tail.length === order.length &&
        tail.every(
          (f, i) =>
            f.fieldPath === order[i]?.field &&
            f.order === DESC[order[i]?.direction as keyof typeof DESC],
        )
      );
    });
  }

  it('records the store query: equality filters, then createdAt desc, __name__ desc', async () => {
    expect(await shapeOf(['status', 'ownerId'])).toEqual({
      collection: 'flow_runs',
      equality: ['status', 'ownerId'],
      orderBy: [
        { field: 'createdAt', direction: 'desc' },
        { field: '__name__', direction: 'desc' },
      ],
    });
  });

  it('has an exact index for every combination the orchestrator runs and every single filter', async () => {
    const combinations = [
      ...ORCHESTRATOR_COMBINATIONS,
      ...(Object.keys(FILTERS) as Filter[]).map((f) => [f]),
    ];
    for (const combination of combinations) {
      const shape = await shapeOf(combination);
      if (shape.equality.length === 0) {
        // One ordered field (+ its __name__): Firestore's automatic single-field index.
        expect(shape.orderBy.map((o) => o.field)).toEqual(['createdAt', '__name__']);
        continue;
      }
      expect(hasIndex(shape, shape.equality), `index for ${shape.equality.join(' + ')}`).toBe(true);
    }
  });

  it('serves every other GET /runs combination by index merging (each filter has its index)', async () => {
    for (const combination of subsets(Object.keys(FILTERS) as Filter[])) {
      const shape = await shapeOf(combination);
      for (const field of shape.equality) {
        expect(hasIndex(shape, [field]), `${field} of ${combination.join(' + ')}`).toBe(true);
      }
    }
  });

  it('has an index for the live owner stream (ownerId ==, updatedAt >=: SSE /events/stream)', () => {
    const shapes: QueryShape[] = [];
    const store = new FirestoreFlowRunStore(recordingFirestore(shapes));
    store
      .watchOwner(
        'alice',
        '2026-09-20T00:00:00.000Z',
        () => undefined,
        () => undefined,
      )
      .close();
    expect(shapes).toEqual([
      { collection: 'flow_runs', equality: ['ownerId'], orderBy: [], range: 'updatedAt' },
    ]);
    expect(indexes).toContainEqual(WATCH_OWNER_INDEX);
  });

  it('has no flow_runs index without a query', async () => {
    // Other collections' indexes are checked next to their stores (libs/report-index).
    const runIndexes = indexes.filter((i) => i.collectionGroup === 'flow_runs');
    const used = new Set<string>([JSON.stringify(WATCH_OWNER_INDEX)]);
    for (const combination of subsets(Object.keys(FILTERS) as Filter[])) {
      const shape = await shapeOf(combination);
      for (const index of runIndexes) {
        const equality = index.fields.slice(0, -1).map((f) => f.fieldPath);
        if (
          equality.every((f) => shape.equality.includes(f)) &&
          (equality.length === 1 || equality.length === shape.equality.length) &&
          hasIndex(shape, equality)
        ) {
          used.add(JSON.stringify(index));
        }
      }
    }
    expect(runIndexes.filter((i) => !used.has(JSON.stringify(i)))).toEqual([]);
  });
});
