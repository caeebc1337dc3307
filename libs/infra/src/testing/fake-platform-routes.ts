import type { FakeGcpApi } from './fake-gcp-api';
import { apiError, bodyOf, group, NAME, notFound, ok, okOrNotFound, SEG } from './fake-responses';

/**
 * FakeGcpApi routes for the platform APIs `tda infra apply` calls: Cloud Run Admin v2 (service
 * lookup), Firestore Admin v1 (database, operations, composite indexes), Firebase Rules v1
 * (rulesets, releases) and Cloud Scheduler v1 (jobs). Pair with installIdentityRoutes, which
 * models the IAM policies of the Cloud Run services found here.
 *
 * Store keys (FakeGcpApi.resources) are full resource names:
 * `projects/{p}/locations/{r}/services/{s}`, `projects/{p}/databases/(default)`,
 * `projects/{p}/databases/(default)/collectionGroups/{cg}/indexes/{id}`,
 * `projects/{p}/rulesets/{id}`, `projects/{p}/releases/cloud.firestore`,
 * `projects/{p}/locations/{r}/jobs/{id}`.
 *
 * Modelled like the real APIs where infra apply depends on it: 404 for a missing resource, 409
 * on a duplicate create, long-running operations for database and index creation (the database
 * one done on its first poll), `__name__` appended to a created index's fields, proto3 zero values
 * left out of Scheduler answers and its User-Agent header added.
 */
export interface PlatformFakeControl {
  /** What `skaffold run` does for a Cloud Run Service; returns its URL. */
  deployRunService(project: string, region: string, name: string): string;
  /** Drift made in the console: replace fields of a stored resource (by full name). */
  patchResource(name: string, patch: Record<string, unknown>): void;
  /** Full names of the stored resources under `prefix`. */
  resourceNames(prefix: string): string[];
}

interface StoredIndex {
  name: string;
  queryScope: string;
  apiScope: string;
  state: string;
  fields: { fieldPath: string; order?: string; arrayConfig?: string }[];
}

export function installPlatformRoutes(fake: FakeGcpApi): PlatformFakeControl {
  const resources = fake.resources;
  let counter = 0;
  const next = (): string => `${++counter}`.padStart(6, '0');

  // --- Cloud Run Admin v2: services ---
  fake.on(
    'GET',
    'run',
    new RegExp(`^/v2/projects/${SEG}/locations/${SEG}/services/${NAME}$`),
    (context) => {
      const name = `projects/${group(context, 0)}/locations/${group(context, 1)}/services/${group(context, 2)}`;
      return okOrNotFound(resources.get(name), `Resource '${group(context, 2)}'`);
    },
  );

  // --- Firestore Admin v1 ---
  const databasePath = `^/v1/projects/${SEG}/databases/${SEG}`;
  fake.on('GET', 'firestore', new RegExp(`${databasePath}$`), (context) => {
    const name = `projects/${group(context, 0)}/databases/${group(context, 1)}`;
    return okOrNotFound(resources.get(name), `Database '${name}'`);
  });
  fake.on('POST', 'firestore', new RegExp(`^/v1/projects/${SEG}/databases$`), (context) => {
    const project = group(context, 0);
    const databaseId = context.request.params?.['databaseId'] ?? '';
    const name = `projects/${project}/databases/${databaseId}`;
    if (resources.has(name)) return apiError(409, 'ALREADY_EXISTS', `Database already exists.`);
    const body = bodyOf(context.request);
    if (typeof body['locationId'] !== 'string' || typeof body['type'] !== 'string') {
      return apiError(400, 'INVALID_ARGUMENT', 'locationId and type are required.');
    }
    resources.set(name, {
      name,
      uid: `uid-${next()}`,
      locationId: body['locationId'],
      type: body['type'],
      concurrencyMode: 'PESSIMISTIC',
    });
    const operation = `projects/${project}/databases/${databaseId}/operations/op-${next()}`;
    // Not done when returned (like the real API): infra apply must poll.
    resources.set(operation, { name: operation, done: true, response: { name } });
    return ok({ name: operation, done: false });
  });
  fake.on('GET', 'firestore', new RegExp(`${databasePath}/operations/${NAME}$`), (context) => {
    const name = `projects/${group(context, 0)}/databases/${group(context, 1)}/operations/${group(context, 2)}`;
    return okOrNotFound(resources.get(name), `Operation '${name}'`);
  });
  const indexesPath = new RegExp(`${databasePath}/collectionGroups/${SEG}/indexes$`);
  fake.on('GET', 'firestore', indexesPath, (context) => {
    const database = `projects/${group(context, 0)}/databases/${group(context, 1)}`;
    if (!resources.has(database)) return notFound(`Database '${database}'`);
    const prefix = `${database}/collectionGroups/${group(context, 2)}/indexes/`;
    const all = [...resources.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .map(([, value]) => value as StoredIndex);
    // Pages of 2, so callers must follow nextPageToken.
    const start = Number(context.request.params?.['pageToken'] ?? '0');
    const page = all.slice(start, start + 2);
    return ok({
      indexes: page,
      ...(start + 2 < all.length ? { nextPageToken: String(start + 2) } : {}),
    });
  });
  fake.on('POST', 'firestore', indexesPath, (context) => {
    const database = `projects/${group(context, 0)}/databases/${group(context, 1)}`;
    if (!resources.has(database)) return notFound(`Database '${database}'`);
    const body = bodyOf(context.request) as Partial<StoredIndex>;
    const fields = [...(body.fields ?? [])];
    const last = fields[fields.length - 1];
    if (last !== undefined && last.fieldPath !== '__name__') {
      fields.push({ fieldPath: '__name__', order: last.order ?? 'ASCENDING' });
    }
    const prefix = `${database}/collectionGroups/${group(context, 2)}/indexes/`;
    const same = [...resources.entries()].some(
      ([key, value]) =>
        key.startsWith(prefix) &&
        JSON.stringify((value as StoredIndex).fields) === JSON.stringify(fields) &&
        (value as StoredIndex).queryScope === body.queryScope,
    );
    if (same) return apiError(409, 'ALREADY_EXISTS', 'index already exists');
    const name = `${prefix}CICAg${next()}`;
    resources.set(name, {
      name,
      queryScope: body.queryScope ?? 'COLLECTION',
      apiScope: 'ANY_API',
      // The fake builds at once; the real build takes minutes.
      state: 'READY',
      fields,
    } satisfies StoredIndex);
    return ok({ name: `${database}/operations/idx-${next()}`, done: false });
  });

  // --- Firebase Rules v1 ---
  fake.on('POST', 'firebaserules', new RegExp(`^/v1/projects/${SEG}/rulesets$`), (context) => {
    const project = group(context, 0);
    const source = bodyOf(context.request)['source'] as
      { files?: { name?: string; content?: string }[] } | undefined;
    if (source?.files === undefined || source.files.length === 0) {
      return apiError(400, 'INVALID_ARGUMENT', 'source.files is required');
    }
    const name = `projects/${project}/rulesets/ruleset-${next()}`;
    const ruleset = { name, source, createTime: new Date(Date.UTC(2025, 0, 1)).toISOString() };
    resources.set(name, ruleset);
    return ok(ruleset);
  });
  fake.on(
    'GET',
    'firebaserules',
    new RegExp(`^/v1/projects/${SEG}/rulesets/${NAME}$`),
    (context) => {
      const name = `projects/${group(context, 0)}/rulesets/${group(context, 1)}`;
      return okOrNotFound(resources.get(name), `Ruleset ${name}`);
    },
  );
  const releasePath = new RegExp(`^/v1/projects/${SEG}/releases/(.+)$`);
  fake.on('GET', 'firebaserules', releasePath, (context) => {
    const name = `projects/${group(context, 0)}/releases/${group(context, 1)}`;
    return okOrNotFound(resources.get(name), `Release ${name}`);
  });
  fake.on('POST', 'firebaserules', new RegExp(`^/v1/projects/${SEG}/releases$`), (context) => {
    const body = bodyOf(context.request);
    const name = String(body['name'] ?? '');
    if (resources.has(name)) return apiError(409, 'ALREADY_EXISTS', `Release ${name} exists`);
    if (!resources.has(String(body['rulesetName'] ?? ''))) {
      return apiError(400, 'INVALID_ARGUMENT', 'rulesetName does not exist');
    }
    const release = { name, rulesetName: body['rulesetName'] };
    resources.set(name, release);
    return ok(release);
  });
  fake.on('PATCH', 'firebaserules', releasePath, (context) => {
    const name = `projects/${group(context, 0)}/releases/${group(context, 1)}`;
    if (!resources.has(name)) return notFound(`Release ${name}`);
    const release = bodyOf(context.request)['release'] as { rulesetName?: string } | undefined;
    if (release?.rulesetName === undefined || !resources.has(release.rulesetName)) {
      return apiError(400, 'INVALID_ARGUMENT', 'release.rulesetName does not exist');
    }
    const updated = { name, rulesetName: release.rulesetName };
    resources.set(name, updated);
    return ok(updated);
  });

  // --- Cloud Scheduler v1 ---
  const jobsPath = `^/v1/projects/${SEG}/locations/${SEG}/jobs`;
  const stored = (job: Record<string, unknown>): Record<string, unknown> => {
    const retry = { ...(job['retryConfig'] as Record<string, unknown> | undefined) };
    // proto3 JSON leaves zero values out
    for (const key of Object.keys(retry)) if (retry[key] === 0) delete retry[key];
    const target = job['httpTarget'] as Record<string, unknown> | undefined;
    return {
      ...job,
      retryConfig: retry,
      ...(target === undefined
        ? {}
        : {
            httpTarget: {
              ...target,
              headers: {
                ...(target['headers'] as Record<string, string> | undefined),
                'User-Agent': 'Google-Cloud-Scheduler',
              },
            },
          }),
    };
  };
  fake.on('GET', 'cloudscheduler', new RegExp(`${jobsPath}/${NAME}$`), (context) => {
    const name = `projects/${group(context, 0)}/locations/${group(context, 1)}/jobs/${group(context, 2)}`;
    return okOrNotFound(resources.get(name), `Job ${name}`);
  });
  fake.on('POST', 'cloudscheduler', new RegExp(`${jobsPath}$`), (context) => {
    const body = bodyOf(context.request);
    const name = String(body['name'] ?? '');
    const parent = `projects/${group(context, 0)}/locations/${group(context, 1)}/jobs/`;
    if (!name.startsWith(parent)) return apiError(400, 'INVALID_ARGUMENT', 'bad job name');
    if (resources.has(name)) return apiError(409, 'ALREADY_EXISTS', `Job ${name} already exists`);
    const job = stored({ ...body, state: 'ENABLED', userUpdateTime: '2025-01-01T00:00:00Z' });
    resources.set(name, job);
    return ok(job);
  });
  fake.on('PATCH', 'cloudscheduler', new RegExp(`${jobsPath}/${NAME}$`), (context) => {
    const name = `projects/${group(context, 0)}/locations/${group(context, 1)}/jobs/${group(context, 2)}`;
    const current = resources.get(name) as Record<string, unknown> | undefined;
    if (current === undefined) return notFound(`Job ${name}`);
    const body = bodyOf(context.request);
    const mask = context.request.params?.['updateMask'];
    const fields = mask === undefined ? Object.keys(body) : mask.split(',');
    const updated: Record<string, unknown> = { ...current };
    for (const field of fields) {
      if (body[field] === undefined) delete updated[field];
      else updated[field] = body[field];
    }
    const job = stored(updated);
    resources.set(name, job);
    return ok(job);
  });

  return {
    deployRunService: (project, region, name) => {
      const uri = `https://${name}-x7k2q9abcd-${region.replace(/[^a-z]/g, '').slice(0, 2)}.a.run.app`;
      resources.set(`projects/${project}/locations/${region}/services/${name}`, {
        name: `projects/${project}/locations/${region}/services/${name}`,
        uri,
        urls: [uri],
      });
      return uri;
    },
    patchResource: (name, patch) => {
      const current = resources.get(name) as Record<string, unknown> | undefined;
      if (current === undefined) throw new Error(`fake: no resource ${name}`);
      resources.set(name, { ...current, ...patch });
    },
    resourceNames: (prefix) => [...resources.keys()].filter((k) => k.startsWith(prefix)),
  };
}
