import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { createFirestore } from '@tda/flow-store';
import {
  applyInfra,
  ENVIRONMENTS_FILE,
  GoogleRestClient,
  InfraError,
  loadFirestoreAssets,
  parseEnvironments,
  selectEnvironment,
  type DeployEnvironment,
  type FirestoreAssets,
  type InfraPlanItem,
} from '@tda/infra';
import { GoogleAuth, PassThroughClient } from 'google-auth-library';
import type { InfraTarget } from './cli-config';
import { applyLlmRegistry } from './infra-llm-registry';

/**
 * The repository's `deploy/` directory: the first directory holding deploy/environments.json
 * walking up from each start (the CLI's own location first, so `tda` works from any cwd inside
 * or outside the checkout, then the cwd).
 */
export function findDeployDir(starts: readonly string[]): string | undefined {
  for (const start of starts) {
    let dir = resolve(start);
    for (;;) {
      if (existsSync(join(dir, ENVIRONMENTS_FILE))) return join(dir, 'deploy');
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return undefined;
}

export interface InfraApplyFlags {
  project?: string;
  profile?: string;
  region?: string;
  dryRun?: boolean;
  environments?: string;
}

/** The environment the flags name, from deploy/environments.json (or --environments). */
export function resolveEnvironment(
  flags: InfraApplyFlags,
  deployDir: string | undefined,
): DeployEnvironment {
  if ((flags.project === undefined) === (flags.profile === undefined)) {
    throw new InfraError('pass exactly one of --project <id> or --profile <name>');
  }
  const file =
    flags.environments ??
    (deployDir === undefined ? undefined : join(deployDir, 'environments.json'));
  if (file === undefined) {
    throw new InfraError(
      `cannot find ${ENVIRONMENTS_FILE} above the CLI or the current directory: pass --environments <file>`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InfraError(`cannot read ${file} as JSON`, {
      details: { file },
      code: 'INVALID_REQUEST',
      cause: error,
    });
  }
  const environment = selectEnvironment(parseEnvironments(json), {
    ...(flags.profile === undefined ? {} : { profile: flags.profile }),
    ...(flags.project === undefined ? {} : { project: flags.project }),
  });
  if (flags.region === undefined) return environment;
  if (!/^[a-z]+-[a-z]+[0-9]$/.test(flags.region)) {
    throw new InfraError(`--region ${flags.region} is not a region such as europe-west1`);
  }
  return { ...environment, region: flags.region };
}

function show(value: unknown): string {
  if (value === null || value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function detail(item: InfraPlanItem): string {
  const changes = item.changes.map((c) => `${c.field}: ${show(c.from)} → ${show(c.to)}`).join('; ');
  if (item.note === undefined) return changes;
  return changes === '' ? item.note : `${changes} (${item.note})`;
}

/** Names longer than this do not widen the NAME column: their CHANGES go on the next line. */
const NAME_COLUMN_MAX = 48;

/**
 * The plan as a table — ACTION, KIND, NAME, CHANGES (field changes `field: from → to`, or the
 * note: why skipped, what a grant is for) — in apply order, then one summary line.
 */
export function renderInfraPlan(items: readonly InfraPlanItem[], dryRun: boolean): string[] {
  const header = ['ACTION', 'KIND', 'NAME', 'CHANGES'];
  const rows = items.map((i) => [i.action, i.kind, i.name, detail(i)]);
  const width = (column: number, max = Infinity): number =>
    Math.max(
      (header[column] ?? '').length,
      ...rows.map((r) => (r[column] ?? '').length).filter((n) => n <= max),
    );
  const widths = [width(0), width(1), width(2, NAME_COLUMN_MAX)];
  const indent = (widths[0] ?? 0) + (widths[1] ?? 0) + (widths[2] ?? 0) + 6;
  const lines: string[] = [];
  for (const [action = '', kind = '', name = '', changes = ''] of [header, ...rows]) {
    const head = `${action.padEnd(widths[0] ?? 0)}  ${kind.padEnd(widths[1] ?? 0)}  `;
    if (name.length > (widths[2] ?? 0) && changes !== '') {
      lines.push(`${head}${name}`, `${' '.repeat(indent)}${changes}`);
    } else {
      lines.push(`${head}${name.padEnd(widths[2] ?? 0)}  ${changes}`.trimEnd());
    }
  }
  const count = (action: InfraPlanItem['action']): number =>
    items.filter((i) => i.action === action).length;
  lines.push(
    '',
    dryRun
      ? `dry run, nothing written: ${count('create')} to create, ${count('update')} to update, ${count('unchanged')} unchanged, ${count('skip')} skipped`
      : `applied: ${count('create')} created, ${count('update')} updated, ${count('unchanged')} unchanged, ${count('skip')} skipped`,
  );
  return lines;
}

export interface InfraCommandIo {
  print(lines: string[]): void;
  target: InfraTarget;
  /** Where to look for deploy/ (default: the CLI's directory, then the cwd). */
  searchFrom: readonly string[];
}

/**
 * `tda infra apply`. Pub/Sub goes to the emulator when PUBSUB_EMULATOR_HOST is set, and then only
 * the topology is applied — unless TDA_GOOGLE_API_ENDPOINT is set too, which runs every part with
 * the REST calls on that endpoint (the CLI's end-to-end test against a fake).
 */
export async function runInfraApply(flags: InfraApplyFlags, io: InfraCommandIo): Promise<void> {
  const deployDir = findDeployDir(io.searchFrom);
  const environment = resolveEnvironment(flags, deployDir);
  const dryRun = flags.dryRun === true;
  const { pubsubEmulatorHost, googleApiEndpoint } = io.target;
  const emulator = pubsubEmulatorHost !== undefined && googleApiEndpoint === undefined;
  let firestore: FirestoreAssets | undefined;
  if (!emulator) {
    if (deployDir === undefined) {
      throw new InfraError('cannot find deploy/firestore above the CLI or the current directory');
    }
    firestore = loadFirestoreAssets(join(deployDir, 'firestore'));
  }

  io.print([
    `Project ${environment.project} (profile ${environment.profile}, region ${environment.region}, Pub/Sub prefix ${environment.pubsubPrefix})`,
    `Pub/Sub: ${pubsubEmulatorHost === undefined ? 'Google Cloud (Application Default Credentials)' : `emulator ${pubsubEmulatorHost}`}`,
    `Google APIs: ${
      emulator
        ? 'not called (the emulator has only Pub/Sub)'
        : (googleApiEndpoint ?? 'https://*.googleapis.com (Application Default Credentials)')
    }`,
    ...(dryRun ? ['dry run: reading only'] : []),
    '',
  ]);

  const pubsub = new PubSub({
    projectId: environment.project,
    ...(pubsubEmulatorHost === undefined
      ? {}
      : { apiEndpoint: pubsubEmulatorHost, emulatorMode: true }),
  });
  const client = new GoogleRestClient({
    ...(googleApiEndpoint === undefined ? {} : { endpointOverride: googleApiEndpoint }),
    // A plain-http endpoint is a local fake: no token is ever sent in clear text.
    ...(googleApiEndpoint?.startsWith('http://') === true
      ? { auth: new GoogleAuth({ authClient: new PassThroughClient() }) }
      : {}),
  });
  try {
    const plan = await applyInfra({
      environment,
      pubsub,
      client,
      dryRun,
      emulator,
      ...(firestore === undefined ? {} : { firestore }),
    });
    if (!emulator) plan.push(...(await seedLlmRegistryOf(environment, io.target, plan, dryRun)));
    io.print(renderInfraPlan(plan, dryRun));
  } finally {
    await pubsub.close();
  }
}

/** The LLM registry section, over a Firestore client of its own (closed before returning). */
async function seedLlmRegistryOf(
  environment: DeployEnvironment,
  target: InfraTarget,
  plan: readonly InfraPlanItem[],
  dryRun: boolean,
): Promise<InfraPlanItem[]> {
  const firestore = createFirestore({
    projectId: environment.project,
    ...(target.firestoreEmulatorHost === undefined
      ? {}
      : { emulatorHost: target.firestoreEmulatorHost }),
  });
  try {
    return await applyLlmRegistry(firestore, {
      dryRun,
      databasePlanned: plan.some((i) => i.kind === 'firestore-database' && i.action === 'create'),
    });
  } finally {
    await firestore.terminate();
  }
}
