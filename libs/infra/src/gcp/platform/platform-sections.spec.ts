import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { serviceDeployment } from '../../deployment-model';
import { FakeGcpApi } from '../../testing/fake-gcp-api';
import {
  installPlatformRoutes,
  type PlatformFakeControl,
} from '../../testing/fake-platform-routes';
import { lookupRunServiceUrl, lookupRunServiceUrls } from './cloud-run-services';
import {
  applySchedulerJobs,
  SCHEDULER_JOBS,
  schedulerJobName,
  schedulerJobResource,
  type SchedulerJobSpec,
} from './cloud-scheduler';
import { runInvokerBindings } from './pubsub-platform';
import {
  loadFirestoreAssets,
  parseFirestoreIndexes,
  type FirestoreAssets,
} from './firestore-assets';
import { applyFirestoreDatabase, firestoreDatabaseName } from './firestore-database';
import { applyFirestoreIndexes, firestoreIndexKey } from './firestore-indexes';
import { applyFirestoreRules, firestoreRulesReleaseName } from './firestore-rules';
import { testEnvironment } from '../../testing';

const env = testEnvironment('prod');
const apply = { dryRun: false };
const dryRun = { dryRun: true };
const DEPLOY_FIRESTORE = join(__dirname, '../../../../../deploy/firestore');
const noWait = { sleep: () => Promise.resolve(), pollMs: 0 };

describe('Cloud Run service lookup', () => {
  let fake: FakeGcpApi;
  let control: PlatformFakeControl;
  beforeEach(() => {
    fake = new FakeGcpApi();
    control = installPlatformRoutes(fake);
  });

  it('returns the URL of a deployed Service and null for one not deployed', async () => {
    const uri = control.deployRunService(env.project, env.region, 'tda-orchestrator');
    expect(await lookupRunServiceUrl(fake, env, 'tda-orchestrator')).toBe(uri);
    expect(await lookupRunServiceUrl(fake, env, 'tda-worker-ohlcv-export')).toBeNull();
    const urls = await lookupRunServiceUrls(fake, env, [
      'tda-orchestrator',
      'tda-worker-chart-export',
    ]);
    expect([...urls.entries()]).toEqual([
      ['tda-orchestrator', uri],
      ['tda-worker-chart-export', null],
    ]);
    expect(fake.calls[0]?.url).toBe(
      'https://run.googleapis.com/v2/projects/acme-tda-prod/locations/europe-west1/services/tda-orchestrator',
    );
    expect(fake.mutationsSince(0)).toEqual([]);
  });
});

describe('Firestore database', () => {
  let fake: FakeGcpApi;
  let control: PlatformFakeControl;
  beforeEach(() => {
    fake = new FakeGcpApi();
    control = installPlatformRoutes(fake);
  });

  it('dry run plans the create without writing; apply creates in native mode at the region and waits; again unchanged', async () => {
    const planned = await applyFirestoreDatabase(fake, env, dryRun, noWait);
    expect(planned).toEqual({
      exists: false,
      item: {
        action: 'create',
        kind: 'firestore-database',
        name: 'projects/acme-tda-prod/databases/(default)',
        changes: [],
        note: 'native mode, europe-west1',
      },
    });
    expect(fake.mutationsSince(0)).toEqual([]);

    const created = await applyFirestoreDatabase(fake, env, apply, noWait);
    expect(created.exists).toBe(true);
    expect(created.item.action).toBe('create');
    expect(fake.resources.get(firestoreDatabaseName(env.project))).toMatchObject({
      type: 'FIRESTORE_NATIVE',
      locationId: 'europe-west1',
    });
    // the operation was polled until done
    expect(fake.calls.some((c) => c.method === 'GET' && c.url.includes('/operations/'))).toBe(true);

    const mark = fake.calls.length;
    const again = await applyFirestoreDatabase(fake, env, apply, noWait);
    expect(again.item.action).toBe('unchanged');
    expect(fake.mutationsSince(mark)).toEqual([]);
  });

  it('reports another location, refuses Datastore mode', async () => {
    await applyFirestoreDatabase(fake, env, apply, noWait);
    control.patchResource(firestoreDatabaseName(env.project), { locationId: 'us-central1' });
    expect((await applyFirestoreDatabase(fake, env, apply, noWait)).item.note).toMatch(
      /located in us-central1, not europe-west1/,
    );
    control.patchResource(firestoreDatabaseName(env.project), { type: 'DATASTORE_MODE' });
    await expect(applyFirestoreDatabase(fake, env, apply, noWait)).rejects.toThrow(
      /DATASTORE_MODE; TDA needs Firestore native mode/,
    );
  });
});

describe('Firestore composite indexes', () => {
  let fake: FakeGcpApi;
  let assets: FirestoreAssets;
  beforeEach(async () => {
    fake = new FakeGcpApi();
    installPlatformRoutes(fake);
    assets = loadFirestoreAssets(DEPLOY_FIRESTORE);
    await applyFirestoreDatabase(fake, env, apply, noWait);
  });
  const indexCount = (): number =>
    [...fake.resources.keys()].filter((k) => k.includes('/indexes/')).length;

  it('creates every index of the file once, never again, and plans without writing', async () => {
    const wanted = assets.indexes.indexes;
    expect(wanted.length).toBeGreaterThan(0);
    const mark0 = fake.calls.length;
    const planned = await applyFirestoreIndexes(fake, env, wanted, {
      dryRun: true,
      databaseExists: true,
    });
    expect(planned.every((i) => i.action === 'create' && i.kind === 'firestore-index')).toBe(true);
    expect(fake.mutationsSince(mark0)).toEqual([]);

    const created = await applyFirestoreIndexes(fake, env, wanted, {
      dryRun: false,
      databaseExists: true,
    });
    expect(created.map((i) => i.action)).toEqual(wanted.map(() => 'create'));
    expect(created[0]?.name).toBe('flow_runs (status ASC, createdAt DESC)');
    expect(indexCount()).toBe(wanted.length);

    // GET returns the fields with __name__ appended (paged by 2): still the same indexes
    const mark = fake.calls.length;
    const again = await applyFirestoreIndexes(fake, env, wanted, {
      dryRun: false,
      databaseExists: true,
    });
    expect(again.every((i) => i.action === 'unchanged')).toBe(true);
    expect(fake.mutationsSince(mark)).toEqual([]);
    // one list per page of 2 (the fake pages like the API does)
    expect(fake.calls.slice(mark).filter((c) => c.url.endsWith('/indexes'))).toHaveLength(
      Math.ceil(wanted.length / 2),
    );
  });

  it('never deletes an index it does not know; an index not READY is noted', async () => {
    const [first, ...rest] = assets.indexes.indexes;
    if (first === undefined) throw new Error('no index in the file');
    await applyFirestoreIndexes(fake, env, assets.indexes.indexes, {
      dryRun: false,
      databaseExists: true,
    });
    const before = indexCount();
    const fewer = await applyFirestoreIndexes(fake, env, rest, {
      dryRun: false,
      databaseExists: true,
    });
    expect(fewer).toHaveLength(rest.length);
    expect(indexCount()).toBe(before);

    const key = [...fake.resources.keys()].find((k) => k.includes('/indexes/')) ?? '';
    const stored = fake.resources.get(key) as Record<string, unknown>;
    fake.resources.set(key, { ...stored, state: 'CREATING' });
    const noted = await applyFirestoreIndexes(fake, env, [first], {
      dryRun: false,
      databaseExists: true,
    });
    expect(noted[0]).toMatchObject({ action: 'unchanged', note: 'state CREATING' });
  });

  it('plans creates without reading when the database is only planned', async () => {
    const empty = new FakeGcpApi();
    installPlatformRoutes(empty);
    const plan = await applyFirestoreIndexes(empty, env, assets.indexes.indexes, {
      dryRun: true,
      databaseExists: false,
    });
    expect(plan.every((i) => i.action === 'create')).toBe(true);
    expect(empty.calls).toEqual([]);
  });

  it('treats an implied trailing __name__ as the same index, another direction as another', () => {
    const fields = [
      { fieldPath: 'status', order: 'ASCENDING' },
      { fieldPath: 'createdAt', order: 'DESCENDING' },
    ];
    const key = firestoreIndexKey('flow_runs', 'COLLECTION', fields);
    expect(
      firestoreIndexKey('flow_runs', 'COLLECTION', [
        ...fields,
        { fieldPath: '__name__', order: 'DESCENDING' },
      ]),
    ).toBe(key);
    expect(
      firestoreIndexKey('flow_runs', 'COLLECTION', [
        ...fields,
        { fieldPath: '__name__', order: 'ASCENDING' },
      ]),
    ).not.toBe(key);
    expect(firestoreIndexKey('flow_runs', 'COLLECTION_GROUP', fields)).not.toBe(key);
  });

  it('rejects an invalid index file', () => {
    expect(() =>
      parseFirestoreIndexes({ indexes: [{ collectionGroup: 'x', fields: [] }] }),
    ).toThrow(/is invalid/);
    expect(() =>
      parseFirestoreIndexes({
        indexes: [],
        fieldOverrides: [{ collectionGroup: 'flow_runs', fieldPath: 'steps', indexes: [] }],
      }),
    ).toThrow(/is invalid/);
  });
});

describe('Firestore security rules', () => {
  let fake: FakeGcpApi;
  let rules: string;
  beforeEach(() => {
    fake = new FakeGcpApi();
    installPlatformRoutes(fake);
    rules = readFileSync(join(DEPLOY_FIRESTORE, 'firestore.rules'), 'utf8');
  });
  const released = (): string => {
    const release = fake.resources.get(firestoreRulesReleaseName(env.project)) as
      { rulesetName: string } | undefined;
    const ruleset = fake.resources.get(release?.rulesetName ?? '') as
      { source: { files: { content: string }[] } } | undefined;
    return ruleset?.source.files[0]?.content ?? '';
  };

  it('denies every client access', () => {
    expect(rules).toMatch(/^rules_version = '2';/);
    expect(rules).toMatch(/match \/\{document=\*\*\} \{\s*allow read, write: if false;\s*\}/);
    expect(rules).not.toMatch(/if true|if request/);
  });

  it('dry run writes nothing; apply creates ruleset and release; again unchanged; drift → update', async () => {
    const planned = await applyFirestoreRules(fake, env, rules, dryRun);
    expect(planned).toMatchObject({ action: 'create', kind: 'firestore-rules' });
    expect(fake.mutationsSince(0)).toEqual([]);

    expect((await applyFirestoreRules(fake, env, rules, apply)).action).toBe('create');
    expect(released()).toBe(rules);

    const mark = fake.calls.length;
    expect(
      (await applyFirestoreRules(fake, env, `${rules.replace(/\n/g, '\r\n')}  \n`, apply)).action,
    ).toBe('unchanged');
    expect(fake.mutationsSince(mark)).toEqual([]);

    // someone released open rules from the console
    const open = rules.replace('if false', 'if true');
    await applyFirestoreRules(fake, env, open, apply);
    expect(released()).toBe(open);
    const mark2 = fake.calls.length;
    const dry = await applyFirestoreRules(fake, env, rules, dryRun);
    expect(dry.action).toBe('update');
    expect(fake.mutationsSince(mark2)).toEqual([]);
    expect((await applyFirestoreRules(fake, env, rules, apply)).action).toBe('update');
    expect(released()).toBe(rules);
    expect(fake.mutationsSince(mark2).map((c) => c.method)).toEqual(['POST', 'PATCH']);
  });
});

describe('Cloud Scheduler jobs', () => {
  let fake: FakeGcpApi;
  let control: PlatformFakeControl;
  let urls: Map<string, string | null>;
  beforeEach(() => {
    fake = new FakeGcpApi();
    control = installPlatformRoutes(fake);
    urls = new Map([
      ['tda-orchestrator', control.deployRunService(env.project, env.region, 'tda-orchestrator')],
    ]);
  });
  const jobName = schedulerJobName(env, 'tda-reconcile');

  it('has the reconcile and schedules tick jobs every minute in UTC, both on the orchestrator', () => {
    expect(
      SCHEDULER_JOBS.map((j) => [j.id, j.schedule, j.timeZone, j.target, j.httpMethod, j.path]),
    ).toEqual([
      [
        'tda-reconcile',
        '* * * * *',
        'Etc/UTC',
        'orchestrator',
        'POST',
        '/admin/reconcile?artifacts=false',
      ],
      [
        'tda-schedules-tick',
        '* * * * *',
        'Etc/UTC',
        'orchestrator',
        'POST',
        '/admin/schedules/tick',
      ],
    ]);
    // the same call settings: the orchestrator's admin audience, its timeout, one quick retry
    const [reconcile, tick] = SCHEDULER_JOBS;
    const settings = (job: SchedulerJobSpec | undefined) => ({
      audienceEnv: job?.audienceEnv,
      attemptDeadlineSeconds: job?.attemptDeadlineSeconds,
      retry: job?.retry,
    });
    expect(settings(tick)).toEqual(settings(reconcile));
  });

  it("names every job's call in the orchestrator's run.invoker grant", () => {
    const { bindings } = runInvokerBindings(env, urls);
    const orchestrator = bindings.find(
      (b) => b.resource.type === 'run-service' && b.resource.name === 'tda-orchestrator',
    );
    expect(orchestrator?.reason).toBe(
      'Cloud Scheduler calls POST /admin/reconcile, POST /admin/schedules/tick',
    );
  });

  it('skips while the orchestrator is not deployed', async () => {
    const plan = await applySchedulerJobs(fake, env, new Map([['tda-orchestrator', null]]), apply);
    expect(plan).toEqual(
      ['tda-reconcile', 'tda-schedules-tick'].map((name) => ({
        action: 'skip',
        kind: 'scheduler-job',
        name,
        changes: [],
        note: 'tda-orchestrator: service not deployed (run infra apply again after skaffold run)',
      })),
    );
    expect(fake.calls).toEqual([]);
  });

  it('dry run writes nothing; apply creates; again unchanged; drift → patch', async () => {
    expect((await applySchedulerJobs(fake, env, urls, dryRun)).map((i) => i.action)).toEqual([
      'create',
      'create',
    ]);
    expect(fake.mutationsSince(0)).toEqual([]);

    expect((await applySchedulerJobs(fake, env, urls, apply)).map((i) => i.action)).toEqual([
      'create',
      'create',
    ]);
    const url = urls.get('tda-orchestrator') ?? '';
    const oidcToken = {
      serviceAccountEmail: 'tda-scheduler@acme-tda-prod.iam.gserviceaccount.com',
      // the custom audience the orchestrator checks (TDA_ADMIN_OIDC_AUDIENCE), else its URL
      audience: serviceDeployment('orchestrator').env(env)['TDA_ADMIN_OIDC_AUDIENCE'] ?? url,
    };
    expect(fake.resources.get(jobName)).toMatchObject({
      schedule: '* * * * *',
      timeZone: 'Etc/UTC',
      attemptDeadline: '60s',
      httpTarget: {
        uri: `${url}/admin/reconcile?artifacts=false`,
        httpMethod: 'POST',
        oidcToken,
      },
    });

    expect(fake.resources.get(schedulerJobName(env, 'tda-schedules-tick'))).toMatchObject({
      schedule: '* * * * *',
      timeZone: 'Etc/UTC',
      attemptDeadline: '60s',
      retryConfig: { retryCount: 1 },
      httpTarget: {
        uri: `${url}/admin/schedules/tick`,
        httpMethod: 'POST',
        oidcToken,
      },
    });

    const mark = fake.calls.length;
    expect((await applySchedulerJobs(fake, env, urls, apply)).map((i) => i.action)).toEqual([
      'unchanged',
      'unchanged',
    ]);
    expect(fake.mutationsSince(mark)).toEqual([]);

    control.patchResource(jobName, {
      schedule: '*/5 * * * *',
      attemptDeadline: '180s',
      state: 'PAUSED',
    });
    const mark2 = fake.calls.length;
    const [dry] = await applySchedulerJobs(fake, env, urls, dryRun);
    expect(dry).toMatchObject({
      action: 'update',
      changes: [
        { field: 'schedule', from: '*/5 * * * *', to: '* * * * *' },
        { field: 'attemptDeadlineSeconds', from: 180, to: 60 },
      ],
      note: 'PAUSED (left paused: resume it deliberately)',
    });
    expect(fake.mutationsSince(mark2)).toEqual([]);
    expect((await applySchedulerJobs(fake, env, urls, apply))[0]?.action).toBe('update');
    expect(fake.resources.get(jobName)).toMatchObject({ schedule: '* * * * *', state: 'PAUSED' });
    expect((await applySchedulerJobs(fake, env, urls, apply))[0]).toMatchObject({
      action: 'unchanged',
      note: 'PAUSED (left paused: resume it deliberately)',
    });

    // a new orchestrator URL moves the target (and the audience only when it is the URL)
    const moved = new Map([['tda-orchestrator', 'https://tda-orchestrator-new.a.run.app']]);
    const [update] = await applySchedulerJobs(fake, env, moved, apply);
    expect(update?.changes.map((c) => c.field)).toEqual(
      serviceDeployment('orchestrator').env(env)['TDA_ADMIN_OIDC_AUDIENCE'] === undefined
        ? ['uri', 'oidcAudience']
        : ['uri'],
    );
  });

  it('uses the audience the target checks (its audienceEnv), or its URL when it checks none', () => {
    const orchestrator = serviceDeployment('orchestrator');
    const [job] = SCHEDULER_JOBS;
    if (job === undefined) throw new Error('no job');
    expect(job.audienceEnv).toBe('TDA_ADMIN_OIDC_AUDIENCE');
    expect(schedulerJobResource(env, job, 'https://o.a.run.app').httpTarget?.oidcToken).toEqual({
      serviceAccountEmail: 'tda-scheduler@acme-tda-prod.iam.gserviceaccount.com',
      audience: orchestrator.env(env)['TDA_ADMIN_OIDC_AUDIENCE'] ?? 'https://o.a.run.app',
    });
    const { audienceEnv: _ignored, ...withoutAudience } = job;
    expect(
      schedulerJobResource(env, withoutAudience, 'https://o.a.run.app').httpTarget?.oidcToken
        ?.audience,
    ).toBe('https://o.a.run.app');
  });
});
