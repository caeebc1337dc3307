import { stepReadyTopic } from '@tda/messaging';
import type { DocTable } from '@tda/step-types';
import {
  LLM_PROVIDERS,
  SERVICE_DEPLOYMENTS,
  type DeployEnvironment,
  type ResourceRole,
  type ServiceDeployment,
} from '../deployment-model';

/**
 * deploy/README.md's per-service tables, as data from the deployment model (and so from the step
 * type descriptors): a new worker appears in them by `TDA_WRITE_DOCS=1`, never by hand.
 * tools/docs/readme.spec.ts fails when the README's copy differs.
 */

/** Placeholders the README explains: `<prefix>` is pubsubPrefix, `<bucket>` artifactsBucket. */
const PLACEHOLDER: Omit<DeployEnvironment, 'llm'> = {
  profile: '<profile>',
  project: '<project>',
  region: '<region>',
  pubsubPrefix: '<prefix>',
  artifactsBucket: '<bucket>',
  maxRunningRuns: 20,
};

const code = (text: string): string => `\`${text}\``;

function table(head: readonly string[], rows: readonly (readonly string[])[]): DocTable {
  return { head, rows };
}

export function deploymentKindTable(
  deployments: readonly ServiceDeployment[] = SERVICE_DEPLOYMENTS,
): DocTable {
  return table(
    ['Service', 'Cloud Run kind', 'Ingress', 'Why'],
    deployments.map((s) => [code(s.name), s.kind, s.ingress, s.why]),
  );
}

export function deploymentSizingTable(
  deployments: readonly ServiceDeployment[] = SERVICE_DEPLOYMENTS,
): DocTable {
  return table(
    [
      'Service',
      'CPU',
      'Memory',
      'Concurrency',
      'Request timeout',
      'Instances',
      'CPU always allocated',
    ],
    deployments.map((s) => [
      code(s.name),
      s.cpu,
      s.memory,
      s.concurrency === undefined ? '—' : String(s.concurrency),
      s.timeoutSeconds === undefined ? '—' : `${s.timeoutSeconds} s`,
      s.kind === 'WorkerPool'
        ? `${s.minInstances} (manual)`
        : `${s.minInstances}–${s.maxInstances}`,
      s.cpuAlwaysAllocated ? 'yes' : 'no',
    ]),
  );
}

function resourceText({ resource }: ResourceRole): string {
  return resource.type === 'project' ? 'project' : `${resource.type} ${code(resource.name)}`;
}

interface RoleRow {
  role: string;
  on: string;
  reason: string;
  providers: Set<string>;
  /** Granted only when the environment sets `exchangeAccount` (the live exchange account). */
  exchangeOnly?: boolean;
}

/**
 * One service's roles over every LLM provider: a role only some providers get is marked
 * (`llm: vertex-ai` only); the orchestrator's one publisher role per step-ready topic is one row.
 */
/** Where a grant applies, as the table says it (every step-ready topic as one row). */
function grantedOn(grant: ResourceRole): string {
  const stepReady =
    grant.resource.type === 'topic' &&
    grant.resource.name.startsWith(stepReadyTopic('', PLACEHOLDER.pubsubPrefix));
  return stepReady
    ? `topic ${code(stepReadyTopic('<step type>', PLACEHOLDER.pubsubPrefix))} (every step type)`
    : resourceText(grant);
}

function roleRows(deployment: ServiceDeployment): RoleRow[] {
  const rows = new Map<string, RoleRow>();
  for (const llm of LLM_PROVIDERS) {
    for (const grant of deployment.roles({ ...PLACEHOLDER, llm })) {
      const on = grantedOn(grant);
      const key = `${grant.role} ${on}`;
      const row = rows.get(key) ?? {
        role: grant.role,
        on,
        reason: grant.reason,
        providers: new Set(),
      };
      row.providers.add(llm);
      rows.set(key, row);
    }
  }
  const live = { ...PLACEHOLDER, llm: LLM_PROVIDERS[0], exchangeAccount: '<exchange>' };
  for (const grant of deployment.roles(live)) {
    const on = grantedOn(grant);
    const key = `${grant.role} ${on}`;
    if (rows.has(key)) continue;
    const providers = new Set<string>(LLM_PROVIDERS);
    rows.set(key, { role: grant.role, on, reason: grant.reason, providers, exchangeOnly: true });
  }
  return [...rows.values()];
}

export function deploymentRolesTable(
  deployments: readonly ServiceDeployment[] = SERVICE_DEPLOYMENTS,
): DocTable {
  return table(
    ['Service account', 'Role', 'On', 'Why'],
    deployments.flatMap((s) =>
      roleRows(s).map((row) => {
        const only = row.providers.size < LLM_PROVIDERS.length;
        const providers = [...row.providers].map((p) => code(`llm: ${p}`)).join(', ');
        const on = only ? `${row.on} (${providers} only)` : row.on;
        return [
          code(s.name),
          code(row.role),
          row.exchangeOnly === true ? `${on} (with ${code('exchangeAccount')} only)` : on,
          row.reason,
        ];
      }),
    ),
  );
}
