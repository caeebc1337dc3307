import { referencedSecrets, type DeployEnvironment } from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { createMissing, gcpCall } from '../gcp-call';

interface SecretVersionResource {
  state?: string;
}

const NEEDED_ROLE = 'roles/secretmanager.admin';

function addValueNote(secret: string, project: string): string {
  return (
    `no enabled version: add a value with ` +
    `printf '%s' "$VALUE" | gcloud secrets versions add ${secret} --project=${project} --data-file=-`
  );
}

/**
 * The Secret Manager secrets the environment's services reference (referencedSecrets: no
 * tda-gemini-api-key with `llm: vertex-ai`), created empty with automatic replication. Values are
 * never written (they would pass through this tool and its logs): a secret without an enabled
 * version gets a note telling how to add one. The replication of an existing secret is left as
 * is (it cannot change after creation, and a user-managed one may be a residency decision); a
 * secret no longer referenced is not deleted, only left out of the plan.
 */
export async function applySecretContainers(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
): Promise<InfraPlanItem[]> {
  const items: InfraPlanItem[] = [];
  for (const secret of referencedSecrets(environment)) {
    items.push(await applySecretContainer(client, environment.project, secret, options));
  }
  return items;
}

async function applySecretContainer(
  client: GcpRestClient,
  project: string,
  secret: string,
  options: ApplyOptions,
): Promise<InfraPlanItem> {
  const base = `https://secretmanager.googleapis.com/v1/projects/${project}/secrets`;
  const item = { kind: 'secret', name: secret };
  const current = await gcpCall(client, { method: 'GET', url: `${base}/${secret}` }, NEEDED_ROLE);

  if (current.status === 404) {
    return createMissing(
      client,
      {
        method: 'POST',
        url: base,
        params: { secretId: secret },
        body: { replication: { automatic: {} } },
      },
      NEEDED_ROLE,
      options,
      item,
      {
        created: addValueNote(secret, project),
        conflict: 'already existed (created concurrently)',
      },
    );
  }

  // `latest` is the newest version whatever its state; 404 when there is none.
  const latest = await gcpCall<SecretVersionResource>(
    client,
    { method: 'GET', url: `${base}/${secret}/versions/latest` },
    NEEDED_ROLE,
  );
  const hasValue = latest.status !== 404 && latest.data.state === 'ENABLED';
  return {
    ...item,
    action: 'unchanged',
    changes: [],
    ...(hasValue ? {} : { note: addValueNote(secret, project) }),
  };
}
