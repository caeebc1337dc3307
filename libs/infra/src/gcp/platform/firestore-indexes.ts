import type { DeployEnvironment } from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { createMissing, gcpCall } from '../gcp-call';
import type { FirestoreIndexField, FirestoreIndexSpec } from './firestore-assets';
import { FIRESTORE_API, firestoreDatabaseName } from './firestore-database';

const NEEDED_ROLE = 'roles/datastore.indexAdmin';

interface IndexResource {
  name?: string;
  queryScope?: string;
  apiScope?: string;
  state?: string;
  fields?: { fieldPath?: string; order?: string; arrayConfig?: string }[];
}

interface IndexList {
  indexes?: IndexResource[];
  nextPageToken?: string;
}

const SHORT_ORDER: Record<string, string> = { ASCENDING: 'ASC', DESCENDING: 'DESC' };

function fieldKey(field: { fieldPath?: string; order?: string; arrayConfig?: string }): string {
  const mode =
    field.order ?? (field.arrayConfig === undefined ? '?' : `ARRAY_${field.arrayConfig}`);
  return `${field.fieldPath ?? ''} ${SHORT_ORDER[mode] ?? mode}`;
}

/**
 * An index's identity as Firestore sees it: scope and ordered fields. Firestore appends
 * `__name__` in the direction of the last field to every composite index it creates (GET returns
 * it), so a trailing `__name__` in that direction is implied and left out on both sides.
 */
export function firestoreIndexKey(
  collectionGroup: string,
  queryScope: string,
  fields: readonly { fieldPath?: string; order?: string; arrayConfig?: string }[],
): string {
  const kept = [...fields];
  const last = kept[kept.length - 1];
  const before = kept[kept.length - 2];
  if (
    last?.fieldPath === '__name__' &&
    before !== undefined &&
    (last.order ?? 'ASCENDING') === (before.order ?? 'ASCENDING')
  ) {
    kept.pop();
  }
  return `${collectionGroup} ${queryScope} (${kept.map(fieldKey).join(', ')})`;
}

function indexKeyOf(spec: FirestoreIndexSpec): string {
  return firestoreIndexKey(spec.collectionGroup, spec.queryScope, spec.fields);
}

/** `flow_runs (status ASC, createdAt DESC)` (+ ` [collection group]`). */
export function firestoreIndexLabel(spec: FirestoreIndexSpec): string {
  const scope = spec.queryScope === 'COLLECTION_GROUP' ? ' [collection group]' : '';
  return `${spec.collectionGroup} (${spec.fields.map((f: FirestoreIndexField) => fieldKey(f)).join(', ')})${scope}`;
}

async function listIndexes(
  client: GcpRestClient,
  database: string,
  collectionGroup: string,
): Promise<IndexResource[]> {
  const url = `${FIRESTORE_API}/${database}/collectionGroups/${collectionGroup}/indexes`;
  const found: IndexResource[] = [];
  let pageToken: string | undefined;
  do {
    const response = await gcpCall<IndexList>(
      client,
      { method: 'GET', url, ...(pageToken === undefined ? {} : { params: { pageToken } }) },
      NEEDED_ROLE,
    );
    if (response.status === 404) return found;
    found.push(...(response.data.indexes ?? []));
    pageToken = response.data.nextPageToken || undefined;
  } while (pageToken !== undefined);
  return found;
}

/**
 * Creates the composite indexes of deploy/firestore/firestore.indexes.json that the database does
 * not have; never deletes one (an index someone added may serve a query of theirs). Creation
 * starts a background build (minutes on a large collection): the plan item says so and the query
 * fails with FAILED_PRECONDITION until it is READY. `databaseExists: false` (a dry run that would
 * create the database) plans every index as create without reading.
 */
export async function applyFirestoreIndexes(
  client: GcpRestClient,
  environment: DeployEnvironment,
  indexes: readonly FirestoreIndexSpec[],
  options: ApplyOptions & { databaseExists: boolean },
): Promise<InfraPlanItem[]> {
  const database = firestoreDatabaseName(environment.project);
  const existing = new Map<string, IndexResource>();
  if (options.databaseExists) {
    for (const group of new Set(indexes.map((i) => i.collectionGroup))) {
      for (const index of await listIndexes(client, database, group)) {
        // Datastore-mode-API indexes do not serve Firestore queries.
        if (index.apiScope !== undefined && index.apiScope !== 'ANY_API') continue;
        existing.set(
          firestoreIndexKey(group, index.queryScope ?? 'COLLECTION', index.fields ?? []),
          index,
        );
      }
    }
  }
  const items: InfraPlanItem[] = [];
  const planned = new Set<string>();
  for (const spec of indexes) {
    const key = indexKeyOf(spec);
    if (planned.has(key)) continue;
    planned.add(key);
    const item = { kind: 'firestore-index', name: firestoreIndexLabel(spec) };
    const found = existing.get(key);
    if (found !== undefined) {
      const state = found.state ?? 'READY';
      items.push({
        ...item,
        action: 'unchanged',
        changes: [],
        ...(state === 'READY' ? {} : { note: `state ${state}` }),
      });
      continue;
    }
    items.push(
      await createMissing(
        client,
        {
          method: 'POST',
          url: `${FIRESTORE_API}/${database}/collectionGroups/${spec.collectionGroup}/indexes`,
          body: { queryScope: spec.queryScope, fields: spec.fields },
        },
        NEEDED_ROLE,
        options,
        item,
        {
          created: 'built in the background; queries needing it fail until it is READY',
          conflict: 'created concurrently',
        },
      ),
    );
  }
  return items;
}
