import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FieldPath, type Firestore } from '@google-cloud/firestore';

/**
 * For the index coverage specs of the Firestore adapters: every query must have a composite
 * index in deploy/firestore/firestore.indexes.json, or it fails on GCP with FAILED_PRECONDITION
 * (the emulator needs none). A recording Firestore captures the real adapters' query shapes, so
 * they are never restated by hand.
 */

export interface QueryShape {
  collection: string;
  equality: string[];
  range: string[];
  orderBy: { field: string; direction: string }[];
}

export interface IndexSpec {
  collectionGroup: string;
  queryScope?: string;
  fields: { fieldPath: string; order?: string }[];
}

const REPO = join(__dirname, '../../..');

/** The composite indexes the deployment creates. */
export const FIRESTORE_INDEXES: readonly IndexSpec[] = (
  JSON.parse(readFileSync(join(REPO, 'deploy/firestore/firestore.indexes.json'), 'utf8')) as {
    indexes: IndexSpec[];
  }
).indexes;

function fieldName(field: unknown): string {
  if (field instanceof FieldPath) {
    return field.isEqual(FieldPath.documentId()) ? '__name__' : field.toString();
  }
  return String(field);
}

/** A Firestore whose queries record their shape into `shapes` and return no documents. */
export function recordingFirestore(shapes: QueryShape[]): Firestore {
  const query = (shape: QueryShape): unknown => ({
    where: (field: unknown, op: string) => {
      if (op === '==') return query({ ...shape, equality: [...shape.equality, fieldName(field)] });
      if (op === '<=') return query({ ...shape, range: [...shape.range, fieldName(field)] });
      throw new Error(`unexpected operator ${op}: extend recordingFirestore`);
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

/**
 * The index serving `shape` exactly: its equality fields (any order, ascending), then the order
 * (a trailing __name__ is implied by Firestore).
 */
export function indexServing(
  shape: QueryShape,
  indexes: readonly IndexSpec[] = FIRESTORE_INDEXES,
): IndexSpec | undefined {
  const order = shape.orderBy.filter(
    (o, i, all) => !(o.field === '__name__' && i === all.length - 1),
  );
  return indexes.find((index) => {
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
