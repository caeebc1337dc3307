import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InfraPlanItem } from '@tda/infra';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';
import { findDeployDir, renderInfraPlan, resolveEnvironment } from './infra-command';

describe('renderInfraPlan', () => {
  const items: InfraPlanItem[] = [
    { action: 'create', kind: 'topic', name: 'tda-step-events', changes: [] },
    {
      action: 'update',
      kind: 'subscription',
      name: 'tda-step-ready-ohlcv-export-sub',
      changes: [
        { field: 'pushEndpoint', from: null, to: 'https://x.a.run.app/pubsub/push' },
        { field: 'ackDeadlineSeconds', from: 60, to: 330 },
      ],
    },
    {
      action: 'unchanged',
      kind: 'firestore-rules',
      name: 'projects/p/releases/cloud.firestore',
      changes: [],
    },
    {
      action: 'skip',
      kind: 'iam-binding',
      name: `Cloud Run service tda-orchestrator: roles/run.invoker → serviceAccount:tda-scheduler@p.iam.gserviceaccount.com`,
      changes: [],
      note: 'service not deployed (run infra apply again after skaffold run)',
    },
  ];

  it('prints ACTION KIND NAME CHANGES; long names put their changes on the next line; one summary line', () => {
    expect(renderInfraPlan(items, false)).toEqual([
      'ACTION     KIND             NAME                                 CHANGES',
      'create     topic            tda-step-events',
      'update     subscription     tda-step-ready-ohlcv-export-sub      pushEndpoint: (none) → https://x.a.run.app/pubsub/push; ackDeadlineSeconds: 60 → 330',
      'unchanged  firestore-rules  projects/p/releases/cloud.firestore',
      'skip       iam-binding      Cloud Run service tda-orchestrator: roles/run.invoker → serviceAccount:tda-scheduler@p.iam.gserviceaccount.com',
      '                                                                 service not deployed (run infra apply again after skaffold run)',
      '',
      'applied: 1 created, 1 updated, 1 unchanged, 1 skipped',
    ]);
  });

  it('says nothing was written on a dry run', () => {
    expect(renderInfraPlan(items, true).at(-1)).toBe(
      'dry run, nothing written: 1 to create, 1 to update, 1 unchanged, 1 skipped',
    );
  });
});

describe('environment selection', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tda-infra-cmd-'));
    mkdirSync(join(dir, 'deploy', 'nested'), { recursive: true });
    writeFileSync(
      join(dir, 'deploy', 'environments.json'),
      JSON.stringify({
        dev: { project: 'acme-tda-dev', region: 'europe-west1' },
        prod: { project: 'acme-tda-prod', region: 'europe-west1', maxRunningRuns: 50 },
      }),
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds deploy/ walking up from each start', () => {
    expect(findDeployDir([join(dir, 'deploy', 'nested')])).toBe(join(dir, 'deploy'));
    expect(findDeployDir(['/', join(dir, 'deploy', 'nested')])).toBe(join(dir, 'deploy'));
    expect(findDeployDir(['/'])).toBeUndefined();
  });

  it('selects by project or profile, overrides the region, and refuses ambiguity', () => {
    const deploy = join(dir, 'deploy');
    expect(resolveEnvironment({ profile: 'prod' }, deploy)).toMatchObject({
      project: 'acme-tda-prod',
      maxRunningRuns: 50,
      pubsubPrefix: 'tda',
      artifactsBucket: 'acme-tda-prod-tda-artifacts',
    });
    expect(
      resolveEnvironment({ project: 'acme-tda-dev', region: 'us-central1' }, deploy),
    ).toMatchObject({
      profile: 'dev',
      region: 'us-central1',
    });
    expect(() => resolveEnvironment({}, deploy)).toThrow(
      /exactly one of --project <id> or --profile <name>/,
    );
    expect(() => resolveEnvironment({ project: 'a', profile: 'b' }, deploy)).toThrow(/exactly one/);
    expect(() => resolveEnvironment({ profile: 'stage' }, deploy)).toThrow(/no profile stage/);
    expect(() => resolveEnvironment({ profile: 'dev', region: 'Europe' }, deploy)).toThrow(
      /--region Europe/,
    );
    expect(() => resolveEnvironment({ profile: 'dev' }, undefined)).toThrow(
      /--environments <file>/,
    );
    expect(() =>
      resolveEnvironment({ profile: 'dev', environments: join(dir, 'missing.json') }, deploy),
    ).toThrow(/cannot read .*missing.json as JSON/);
  });

  it('tda infra apply: errors are one line on stderr and exit 1; config is validated', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = (env: Record<string, string>): CliIo => ({
      stdout: { write: (t: string) => out.push(t) > 0 },
      stderr: { write: (t: string) => err.push(t) > 0 },
      target: () => {
        throw new Error('unused');
      },
      env,
      deploySearchFrom: [join(dir, 'deploy', 'nested')],
    });
    expect(await runCli(['infra', 'apply', '--dry-run'], io({}))).toBe(1);
    expect(err.join('')).toBe(
      'error INVALID_REQUEST: pass exactly one of --project <id> or --profile <name>\n',
    );
    err.length = 0;
    expect(
      await runCli(
        ['infra', 'plan', '--profile', 'dev'],
        io({ PUBSUB_EMULATOR_HOST: 'not a host' }),
      ),
    ).toBe(1);
    expect(err.join('')).toMatch(/PUBSUB_EMULATOR_HOST: must be host:port/);
    expect(out).toEqual([]);
  });
});
