import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InfraError } from '../../infra.errors';

/**
 * deploy/firestore/: the composite indexes (the Firebase CLI's firestore.indexes.json format, so
 * `firebase deploy --only firestore:indexes` reads the same file) and the security rules.
 */
const indexFieldSchema = z
  .object({
    fieldPath: z.string().min(1),
    order: z.enum(['ASCENDING', 'DESCENDING']).optional(),
    arrayConfig: z.literal('CONTAINS').optional(),
  })
  .strict()
  .refine(
    (f) => (f.order === undefined) !== (f.arrayConfig === undefined),
    'each field has exactly one of order or arrayConfig',
  );

const indexSchema = z
  .object({
    collectionGroup: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
    queryScope: z.enum(['COLLECTION', 'COLLECTION_GROUP']).default('COLLECTION'),
    fields: z.array(indexFieldSchema).min(2, 'a composite index has at least two fields'),
  })
  .strict();

export const firestoreIndexFileSchema = z
  .object({
    indexes: z.array(indexSchema),
    // Single-field index exemptions: not managed by infra apply (none are needed today).
    fieldOverrides: z.array(z.unknown()).length(0, 'fieldOverrides are not supported yet'),
  })
  .strict();

export type FirestoreIndexFile = z.infer<typeof firestoreIndexFileSchema>;
export type FirestoreIndexSpec = FirestoreIndexFile['indexes'][number];
export type FirestoreIndexField = FirestoreIndexSpec['fields'][number];

export interface FirestoreAssets {
  indexes: FirestoreIndexFile;
  /** firestore.rules, verbatim. */
  rules: string;
}

export const FIRESTORE_INDEXES_FILE = 'firestore.indexes.json';
export const FIRESTORE_RULES_FILE = 'firestore.rules';

export function parseFirestoreIndexes(
  json: unknown,
  source = FIRESTORE_INDEXES_FILE,
): FirestoreIndexFile {
  const parsed = firestoreIndexFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new InfraError(`${source} is invalid`, {
      details: {
        issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
      },
    });
  }
  return parsed.data;
}

/** Reads `<dir>/firestore.indexes.json` and `<dir>/firestore.rules` (dir: deploy/firestore). */
export function loadFirestoreAssets(dir: string): FirestoreAssets {
  const read = (name: string): string => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch (error) {
      throw new InfraError(`cannot read ${join(dir, name)}`, {
        details: { file: join(dir, name) },
        code: 'NOT_FOUND',
        cause: error,
      });
    }
  };
  const indexesText = read(FIRESTORE_INDEXES_FILE);
  let json: unknown;
  try {
    json = JSON.parse(indexesText);
  } catch (error) {
    throw new InfraError(`${join(dir, FIRESTORE_INDEXES_FILE)} is not JSON`, {
      details: {},
      code: 'INVALID_REQUEST',
      cause: error,
    });
  }
  const rules = read(FIRESTORE_RULES_FILE);
  if (!/^rules_version\s*=\s*'2';/m.test(rules)) {
    throw new InfraError(`${join(dir, FIRESTORE_RULES_FILE)} must declare rules_version = '2'`);
  }
  return { indexes: parseFirestoreIndexes(json, join(dir, FIRESTORE_INDEXES_FILE)), rules };
}
