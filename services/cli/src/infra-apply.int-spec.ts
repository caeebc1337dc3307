import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { INFRA_SECTIONS, SCHEDULER_JOBS, SERVICE_DEPLOYMENTS } from '@tda/infra';
import {
  FakeGcpApi,
  installIdentityRoutes,
  installPlatformRoutes,
  type PlatformFakeControl,
} from '@tda/infra/testing';
import { buildTopology, stepReadySubscription } from '@tda/messaging';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';

const REGION = 'europe-west1';

interface Row {
  action: string;
  kind: string;
  name: string;
}

/**
 * `tda infra apply` in process, against the Pub/Sub emulator: each test has its own project id
 * (the emulator keeps projects apart) and Pub/Sub prefix, in a temporary environments file.
 */
describe('tda infra apply (Pub/Sub emulator)', () => {
  const { pubsubHost, firestoreHost } = emulatorEndpoints();
  let dir = '';
  let project = '';
  let prefix = '';
  let pubsub: PubSub;
  let out: string[] = [];
  let err: string[] = [];

  const io = (env: Record<string, string>): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => {
      throw new Error('tda infra must not need the orchestrator API');
    },
    env,
  });

  /** Runs the CLI; returns the exit code, the table rows and the summary line. */
  const infra = async (
    env: Record<string, string>,
    ...flags: string[]
  ): Promise<{ code: number; rows: Row[]; summary: string; text: string }> => {
    out = [];
    err = [];
    const code = await runCli(
      [
        'infra',
        'apply',
        '--project',
        project,
        '--environments',
        join(dir, 'environments.json'),
        ...flags,
      ],
      io(env),
    );
    const text = out.join('');
    const lines = text.split('\n');
    const start = lines.findIndex((l) => l.startsWith('ACTION'));
    const rows = lines
      .slice(start + 1)
      .filter((l) => /^(create|update|unchanged|skip) /.test(l))
      .map((l) => {
        const [action = '', kind = '', name = ''] = l.split(/\s{2,}/);
        return { action, kind, name };
      });
    const summary = lines.find((l) => /^(dry run, nothing written|applied):/.test(l)) ?? '';
    return { code, rows, summary, text };
  };

  const topicNames = async (): Promise<string[]> => {
    const [topics] = await pubsub.getTopics();
    return topics
      .map((t) => t.name.split('/').pop() ?? '')
      .filter((n) => n.startsWith(`${prefix}-`));
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tda-infra-'));
    project = uniqueName('tda-infra');
    prefix = uniqueName('ia');
    writeFileSync(
      join(dir, 'environments.json'),
      JSON.stringify({ itest: { project, region: REGION, pubsubPrefix: prefix } }),
    );
    pubsub = new PubSub({ projectId: project, apiEndpoint: pubsubHost, emulatorMode: true });
  });
  afterEach(async () => {
    await pubsub.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--dry-run prints a plan of creates and creates nothing; apply creates; applying again changes nothing', async () => {
    const env = { PUBSUB_EMULATOR_HOST: pubsubHost };
    const topology = buildTopology({ prefix });
    const resources = topology.topics.length + topology.subscriptions.length;
    const sections = INFRA_SECTIONS.length - 1;

    const dry = await infra(env, '--dry-run');
    expect(err.join('')).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.text).toContain(
      `Project ${project} (profile itest, region ${REGION}, Pub/Sub prefix ${prefix})`,
    );
    expect(dry.text).toContain(`Pub/Sub: emulator ${pubsubHost}`);
    expect(dry.rows.filter((r) => r.kind === 'topic' || r.kind === 'subscription')).toEqual([
      ...topology.topics.map((t) => ({ action: 'create', kind: 'topic', name: t.name })),
      ...topology.subscriptions.map((s) => ({
        action: 'create',
        kind: 'subscription',
        name: s.name,
      })),
    ]);
    expect(dry.rows.filter((r) => r.action === 'skip').map((r) => r.kind)).toEqual(
      Array.from({ length: sections }, () => 'section'),
    );
    expect(dry.text).toContain('not available on the emulator');
    expect(dry.summary).toBe(
      `dry run, nothing written: ${resources} to create, 0 to update, 0 unchanged, ${sections} skipped`,
    );
    expect(await topicNames()).toEqual([]);

    const applied = await infra(env);
    expect(applied.code).toBe(0);
    expect(applied.summary).toBe(
      `applied: ${resources} created, 0 updated, 0 unchanged, ${sections} skipped`,
    );
    expect((await topicNames()).sort()).toEqual(topology.topics.map((t) => t.name).sort());
    const [metadata] = await pubsub
      .subscription(stepReadySubscription('LLM_REPORT', prefix))
      .getMetadata();
    expect(metadata.deadLetterPolicy?.deadLetterTopic).toBe(
      `projects/${project}/topics/${prefix}-dead-letter`,
    );

    const again = await infra(env);
    expect(again.code).toBe(0);
    expect(
      again.rows.filter((r) => r.action !== 'skip').every((r) => r.action === 'unchanged'),
    ).toBe(true);
    expect(again.rows.filter((r) => r.action === 'unchanged')).toHaveLength(resources);
    expect(again.summary).toBe(
      `applied: 0 created, 0 updated, ${resources} unchanged, ${sections} skipped`,
    );
  });

  it('fails with a clear message and exit 1 for a project not in the environments file', async () => {
    out = [];
    err = [];
    const code = await runCli(
      [
        'infra',
        'apply',
        '--project',
        'not-listed-1',
        '--environments',
        join(dir, 'environments.json'),
      ],
      io({ PUBSUB_EMULATOR_HOST: pubsubHost }),
    );
    expect(code).toBe(1);
    expect(err.join('')).toMatch(
      /^error INVALID_REQUEST: project not-listed-1 is not in deploy\/environments.json/,
    );
  });

  describe('every section, with the Google REST calls on a FakeGcpApi over HTTP', () => {
    let fake: FakeGcpApi;
    let platform: PlatformFakeControl;
    let endpoint = '';
    beforeEach(async () => {
      fake = new FakeGcpApi();
      installIdentityRoutes(fake, { projectNumber: '123456789012' });
      platform = installPlatformRoutes(fake);
      endpoint = await fake.listen();
    });
    afterEach(async () => {
      await fake.close();
    });

    it('plans, applies every part, and a second apply is all unchanged with no write', async () => {
      // The LLM registry seed (the last section) talks to Firestore itself: the emulator here.
      const env = {
        PUBSUB_EMULATOR_HOST: pubsubHost,
        FIRESTORE_EMULATOR_HOST: firestoreHost,
        TDA_GOOGLE_API_ENDPOINT: endpoint,
      };
      // skaffold run already happened (every Cloud Run Service of the model, whichever step types
      // there are): push, invokers and the Scheduler job are all applied
      const urls = new Map(
        SERVICE_DEPLOYMENTS.filter((s) => s.kind === 'Service').map(({ name }) => [
          name,
          platform.deployRunService(project, REGION, name),
        ]),
      );
      // The topics and subscriptions live in the emulator; the fake models their IAM policies,
      // which it keeps only for resources it knows: it is told their names.
      const topology = buildTopology({ prefix });
      for (const { name } of [...topology.topics]) {
        fake.resources.set(`projects/${project}/topics/${name}`, { name });
      }
      for (const { name } of topology.subscriptions) {
        fake.resources.set(`projects/${project}/subscriptions/${name}`, { name });
      }

      const dry = await infra(env, '--dry-run');
      expect(err.join('')).toBe('');
      expect(dry.code).toBe(0);
      expect(dry.text).toContain(`Google APIs: ${endpoint}`);
      expect(fake.mutationsSince(0)).toEqual([]);
      expect(await topicNames()).toEqual([]);
      expect(new Set(dry.rows.map((r) => r.action))).toEqual(new Set(['create', 'skip']));

      const first = await infra(env);
      expect(first.code).toBe(0);
      const kinds = new Set(first.rows.filter((r) => r.action === 'create').map((r) => r.kind));
      expect([...kinds].sort()).toEqual(
        [
          'artifact-registry-repository',
          'bucket',
          'firestore-database',
          'firestore-index',
          'firestore-rules',
          'iam-binding',
          'llm-prompt',
          'llm-schema',
          'scheduler-job',
          'secret',
          'service-account',
          'subscription',
          'topic',
        ].sort(),
      );
      for (const job of SCHEDULER_JOBS) {
        expect(
          fake.resources.get(`projects/${project}/locations/${REGION}/jobs/${job.id}`),
        ).toMatchObject({
          httpTarget: { uri: `${urls.get(`tda-${job.target}`) ?? ''}${job.path}` },
        });
      }
      const [pushSub] = await pubsub
        .subscription(stepReadySubscription('OHLCV_EXPORT', prefix))
        .getMetadata();
      expect(pushSub.pushConfig).toMatchObject({
        pushEndpoint: `${urls.get('tda-worker-ohlcv-export') ?? ''}/pubsub/push`,
        oidcToken: {
          serviceAccountEmail: `tda-pubsub-push@${project}.iam.gserviceaccount.com`,
          audience: 'tda-worker-ohlcv-export',
        },
      });
      expect(pushSub.ackDeadlineSeconds).toBe(330);

      const mark = fake.calls.length;
      const second = await infra(env);
      expect(second.code).toBe(0);
      expect(second.rows.filter((r) => r.action !== 'unchanged')).toEqual([]);
      expect(second.summary).toBe(
        `applied: 0 created, 0 updated, ${second.rows.length} unchanged, 0 skipped`,
      );
      expect(fake.mutationsSince(mark)).toEqual([]);
    });
  });
});
