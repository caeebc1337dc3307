import {
  PUSH_INVOKER_ACCOUNT_ID,
  SCHEDULER_ACCOUNT_ID,
  SERVICE_DEPLOYMENTS,
  serviceAccountEmail,
  type DeployEnvironment,
} from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { createMissing, gcpCall } from '../gcp-call';

/** One of TDA's own service accounts. */
export interface DesiredServiceAccount {
  /** The part before `@` (6..30 of a-z 0-9 -). */
  accountId: string;
  /** At most 100 characters. */
  displayName: string;
  /** At most 256 characters. */
  description: string;
}

interface ServiceAccountResource {
  email?: string;
  displayName?: string;
  description?: string;
  disabled?: boolean;
}

const MANAGED = 'managed by tda infra apply';
const NEEDED_ROLE = 'roles/iam.serviceAccountAdmin';

/** Every deployable service's runtime identity, plus the Pub/Sub push and Scheduler invokers. */
export function desiredServiceAccounts(_environment: DeployEnvironment): DesiredServiceAccount[] {
  return [
    ...SERVICE_DEPLOYMENTS.map((s) => ({
      accountId: s.name,
      displayName: `TDA ${s.project}`,
      description: `Runtime identity of the Cloud Run ${s.kind === 'Service' ? 'service' : 'worker pool'} ${s.name} (${MANAGED})`,
    })),
    {
      accountId: PUSH_INVOKER_ACCOUNT_ID,
      displayName: 'TDA Pub/Sub push invoker',
      description: `Identity in the OIDC tokens of Pub/Sub push deliveries to the TDA push workers; holds run.invoker on them (${MANAGED})`,
    },
    {
      accountId: SCHEDULER_ACCOUNT_ID,
      displayName: 'TDA Cloud Scheduler invoker',
      description: `Identity Cloud Scheduler calls the TDA orchestrator with; holds run.invoker on it (${MANAGED})`,
    },
  ];
}

/**
 * Creates the missing service accounts and brings a drifted display name or description back
 * (PATCH): the `tda-*` accounts are TDA's own, their texts are documentation, so overwriting an
 * edit is safe. A disabled account is reported, never re-enabled: disabling is a deliberate
 * security action of an operator.
 */
export async function applyServiceAccounts(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
): Promise<InfraPlanItem[]> {
  const items: InfraPlanItem[] = [];
  for (const desired of desiredServiceAccounts(environment)) {
    items.push(await applyServiceAccount(client, environment.project, desired, options));
  }
  return items;
}

async function applyServiceAccount(
  client: GcpRestClient,
  project: string,
  desired: DesiredServiceAccount,
  options: ApplyOptions,
): Promise<InfraPlanItem> {
  const email = serviceAccountEmail(desired.accountId, project);
  const url = `https://iam.googleapis.com/v1/projects/${project}/serviceAccounts/${email}`;
  const item = { kind: 'service-account', name: email };
  const current = await gcpCall<ServiceAccountResource>(
    client,
    { method: 'GET', url },
    NEEDED_ROLE,
  );

  if (current.status === 404) {
    return createMissing(
      client,
      {
        method: 'POST',
        url: `https://iam.googleapis.com/v1/projects/${project}/serviceAccounts`,
        body: {
          accountId: desired.accountId,
          serviceAccount: { displayName: desired.displayName, description: desired.description },
        },
      },
      NEEDED_ROLE,
      options,
      item,
      { created: desired.displayName, conflict: 'already existed (created concurrently)' },
    );
  }

  const changes = (['displayName', 'description'] as const)
    .filter((field) => (current.data[field] ?? '') !== desired[field])
    .map((field) => ({ field, from: current.data[field] ?? '', to: desired[field] }));
  const note =
    current.data.disabled === true
      ? `disabled: the service using it cannot authenticate (gcloud iam service-accounts enable ${email})`
      : undefined;
  if (changes.length > 0 && !options.dryRun) {
    await gcpCall(
      client,
      {
        method: 'PATCH',
        url,
        body: {
          serviceAccount: { displayName: desired.displayName, description: desired.description },
          updateMask: changes.map((c) => c.field).join(','),
        },
      },
      NEEDED_ROLE,
    );
  }
  return {
    ...item,
    action: changes.length > 0 ? 'update' : 'unchanged',
    changes,
    ...(note === undefined ? {} : { note }),
  };
}
