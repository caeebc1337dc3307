import type { DeployEnvironment } from '../../deployment-model';
import { InfraError } from '../../infra.errors';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { gcpCall } from '../gcp-call';
import { FIRESTORE_RULES_FILE } from './firestore-assets';

export const FIREBASE_RULES_API = 'https://firebaserules.googleapis.com/v1';
const NEEDED_ROLE = 'roles/firebaserules.admin';

interface ReleaseResource {
  name?: string;
  rulesetName?: string;
}

interface RulesetResource {
  name?: string;
  source?: { files?: { name?: string; content?: string }[] };
}

/** The release Firestore enforces for the `(default)` database. */
export function firestoreRulesReleaseName(project: string): string {
  return `projects/${project}/releases/cloud.firestore`;
}

/** Line endings and trailing whitespace are not a change of the rules. */
function normalize(source: string): string {
  return source
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

/**
 * Firestore security rules (deploy/firestore/firestore.rules) through the Firebase Rules API: a
 * new ruleset with the file, then the `cloud.firestore` release pointed at it (created, or
 * updated). Unchanged when the released ruleset's source is the file. Old rulesets are left
 * (the API keeps history; the console lists them).
 */
export async function applyFirestoreRules(
  client: GcpRestClient,
  environment: DeployEnvironment,
  rules: string,
  options: ApplyOptions,
): Promise<InfraPlanItem> {
  const project = environment.project;
  const releaseName = firestoreRulesReleaseName(project);
  const item = { kind: 'firestore-rules', name: releaseName };
  const release = await gcpCall<ReleaseResource>(
    client,
    { method: 'GET', url: `${FIREBASE_RULES_API}/${releaseName}` },
    NEEDED_ROLE,
  );
  let current: string | undefined;
  if (release.status !== 404 && release.data.rulesetName !== undefined) {
    const ruleset = await gcpCall<RulesetResource>(
      client,
      { method: 'GET', url: `${FIREBASE_RULES_API}/${release.data.rulesetName}` },
      NEEDED_ROLE,
    );
    if (ruleset.status !== 404) {
      current = (ruleset.data.source?.files ?? []).map((f) => f.content ?? '').join('\n');
    }
  }
  if (current !== undefined && normalize(current) === normalize(rules)) {
    return { ...item, action: 'unchanged', changes: [] };
  }
  const action = release.status === 404 ? 'create' : 'update';
  const planned: InfraPlanItem = {
    ...item,
    action,
    changes:
      action === 'update'
        ? [{ field: 'ruleset', from: release.data.rulesetName ?? null, to: FIRESTORE_RULES_FILE }]
        : [],
    note: 'deny all client access (server SDKs bypass rules)',
  };
  if (options.dryRun) return planned;

  const created = await gcpCall<RulesetResource>(
    client,
    {
      method: 'POST',
      url: `${FIREBASE_RULES_API}/projects/${project}/rulesets`,
      body: { source: { files: [{ name: FIRESTORE_RULES_FILE, content: rules }] } },
    },
    NEEDED_ROLE,
  );
  const rulesetName = created.data.name;
  if (typeof rulesetName !== 'string') {
    throw new InfraError('the Firebase Rules API returned a ruleset without a name');
  }
  if (action === 'create') {
    await gcpCall(
      client,
      {
        method: 'POST',
        url: `${FIREBASE_RULES_API}/projects/${project}/releases`,
        body: { name: releaseName, rulesetName },
      },
      NEEDED_ROLE,
    );
  } else {
    await gcpCall(
      client,
      {
        method: 'PATCH',
        url: `${FIREBASE_RULES_API}/${releaseName}`,
        body: { release: { name: releaseName, rulesetName }, updateMask: 'rulesetName' },
      },
      NEEDED_ROLE,
    );
  }
  return planned;
}
