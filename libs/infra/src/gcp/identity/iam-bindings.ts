import type { DeployEnvironment, ResourceRole } from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import { GcpApiError, type GcpRestClient, type GcpRestRequest } from '../gcp-rest.client';
import { gcpCall, isGcpStatus } from '../gcp-call';

/**
 * A resource with an IAM policy: the model's resource kinds plus Cloud Run services (invoker) and
 * service accounts (who may act as or mint tokens for one account, instead of every account of
 * the project).
 */
export type IamResource =
  | ResourceRole['resource']
  | { type: 'run-service'; name: string }
  | { type: 'service-account'; email: string };

/** One (resource, role, member) grant that must exist. */
export interface IamBinding {
  resource: IamResource;
  role: string;
  /** IAM member, e.g. `serviceAccount:tda-orchestrator@p.iam.gserviceaccount.com`. */
  member: string;
  /** Why (printed as the plan item's note). */
  reason: string;
}

/** The subset of google.iam.v1.Policy (and the Storage JSON API policy) TDA reads and writes. */
export interface IamPolicy {
  version?: number;
  etag?: string;
  bindings?: IamPolicyBinding[];
  /** Other fields (Storage's kind/resourceId, auditConfigs) are sent back untouched. */
  [field: string]: unknown;
}

export interface IamPolicyBinding {
  role: string;
  members?: string[];
  condition?: unknown;
}

export interface IamApplyTuning {
  /**
   * Waits before retrying a setIamPolicy that names a service account IAM does not know yet: a
   * new account takes up to about a minute to become grantable. Default: 2, 4, 8, 16, 30 s.
   */
  propagationDelaysMs?: readonly number[];
  sleep?: (ms: number) => Promise<void>;
}

export function serviceAccountMember(email: string): string {
  return `serviceAccount:${email}`;
}

interface PolicyEndpoint {
  label: string;
  read: GcpRestRequest;
  write: (policy: IamPolicy) => GcpRestRequest;
  neededRole: string;
}

// Version 3 is requested everywhere so a conditional binding someone else added comes back whole
// and is written back unchanged (reading at version 1 and writing would drop its condition).
const V3_QUERY = { 'options.requestedPolicyVersion': '3' };

function policyEndpoint(resource: IamResource, environment: DeployEnvironment): PolicyEndpoint {
  const p = environment.project;
  const getSet = (base: string, label: string, neededRole: string): PolicyEndpoint => ({
    label,
    read: { method: 'GET', url: `${base}:getIamPolicy`, params: V3_QUERY },
    write: (policy) => ({ method: 'POST', url: `${base}:setIamPolicy`, body: { policy } }),
    neededRole,
  });
  switch (resource.type) {
    case 'project': {
      const base = `https://cloudresourcemanager.googleapis.com/v1/projects/${p}`;
      return {
        label: `project ${p}`,
        // Resource Manager reads policies by POST (a read: no state changes).
        read: {
          method: 'POST',
          url: `${base}:getIamPolicy`,
          body: { options: { requestedPolicyVersion: 3 } },
        },
        write: (policy) => ({ method: 'POST', url: `${base}:setIamPolicy`, body: { policy } }),
        neededRole: 'roles/resourcemanager.projectIamAdmin',
      };
    }
    case 'topic':
      return getSet(
        `https://pubsub.googleapis.com/v1/projects/${p}/topics/${resource.name}`,
        `topic ${resource.name}`,
        'roles/pubsub.admin',
      );
    case 'subscription':
      return getSet(
        `https://pubsub.googleapis.com/v1/projects/${p}/subscriptions/${resource.name}`,
        `subscription ${resource.name}`,
        'roles/pubsub.admin',
      );
    case 'secret':
      return getSet(
        `https://secretmanager.googleapis.com/v1/projects/${p}/secrets/${resource.name}`,
        `secret ${resource.name}`,
        'roles/secretmanager.admin',
      );
    case 'run-service':
      return getSet(
        `https://run.googleapis.com/v2/projects/${p}/locations/${environment.region}/services/${resource.name}`,
        `Cloud Run service ${resource.name}`,
        'roles/run.admin',
      );
    case 'service-account': {
      const base = `https://iam.googleapis.com/v1/projects/${p}/serviceAccounts/${resource.email}`;
      return {
        label: `service account ${resource.email}`,
        // IAM v1 reads a service account's policy by POST, the policy version as a query
        // parameter (a read: no state changes).
        read: { method: 'POST', url: `${base}:getIamPolicy`, params: V3_QUERY },
        write: (policy) => ({ method: 'POST', url: `${base}:setIamPolicy`, body: { policy } }),
        neededRole: 'roles/iam.serviceAccountAdmin',
      };
    }
    case 'bucket': {
      const url = `https://storage.googleapis.com/storage/v1/b/${resource.name}/iam`;
      return {
        label: `bucket ${resource.name}`,
        read: { method: 'GET', url, params: { optionsRequestedPolicyVersion: '3' } },
        // The Storage JSON API takes the policy itself as the body (no {policy} wrapper).
        write: (policy) => ({ method: 'PUT', url, body: policy }),
        neededRole: 'roles/storage.admin',
      };
    }
  }
}

function resourceKey(resource: IamResource): string {
  switch (resource.type) {
    case 'project':
      return 'project';
    case 'service-account':
      // IAM lowercases emails: one policy whatever the case the binding was written in.
      return `${resource.type}/${resource.email.toLowerCase()}`;
    default:
      return `${resource.type}/${resource.name}`;
  }
}

function bindingKey(binding: IamBinding): string {
  return `${resourceKey(binding.resource)} ${binding.role} ${binding.member.toLowerCase()}`;
}

/** Whether an unconditional binding of `role` lists `member` (IAM lowercases emails). */
export function policyGrants(policy: IamPolicy, role: string, member: string): boolean {
  const wanted = member.toLowerCase();
  return (policy.bindings ?? []).some(
    (b) =>
      b.role === role &&
      b.condition === undefined &&
      (b.members ?? []).some((m) => m.toLowerCase() === wanted),
  );
}

/**
 * `policy` plus the given grants, every existing binding and member kept (add-only: TDA never
 * removes a grant someone else made). The etag is kept, so a concurrent change is rejected.
 */
export function policyWithGrants(
  policy: IamPolicy,
  grants: readonly Pick<IamBinding, 'role' | 'member'>[],
): IamPolicy {
  const bindings = (policy.bindings ?? []).map((b) => ({
    ...b,
    ...(b.members === undefined ? {} : { members: [...b.members] }),
  }));
  for (const { role, member } of grants) {
    if (policyGrants({ bindings }, role, member)) continue;
    const target = bindings.find((b) => b.role === role && b.condition === undefined);
    if (target === undefined) bindings.push({ role, members: [member] });
    else target.members = [...(target.members ?? []), member];
  }
  const conditional = bindings.some((b) => b.condition !== undefined);
  return {
    ...policy,
    // A policy with conditions must be written as version 3; otherwise keep what was read.
    version: conditional ? 3 : (policy.version ?? 1),
    bindings,
  };
}

function planName(binding: IamBinding, label: string): string {
  return `${label}: ${binding.role} → ${binding.member}`;
}

const DEFAULT_PROPAGATION_DELAYS_MS = [2_000, 4_000, 8_000, 16_000, 30_000];

/**
 * Adds every missing binding with one read-modify-write per resource (get the policy, add the
 * members, set it with the read etag). Add-only. An etag conflict (409 ABORTED; 412 on Storage)
 * retries the whole read-modify-write once. A resource that does not exist yet is `skip` with a
 * note (the apply that creates it grants on it afterwards). One plan item per binding, in input
 * order; duplicates are reported once.
 */
export async function applyIamBindings(
  client: GcpRestClient,
  environment: DeployEnvironment,
  bindings: readonly IamBinding[],
  options: ApplyOptions,
  tuning: IamApplyTuning = {},
): Promise<InfraPlanItem[]> {
  const groups = new Map<string, IamBinding[]>();
  const seen = new Set<string>();
  for (const binding of bindings) {
    if (seen.has(bindingKey(binding))) continue;
    seen.add(bindingKey(binding));
    const key = resourceKey(binding.resource);
    groups.set(key, [...(groups.get(key) ?? []), binding]);
  }
  const items: InfraPlanItem[] = [];
  for (const group of groups.values()) {
    items.push(...(await applyResourceGrants(client, environment, group, options, tuning)));
  }
  return items;
}

async function applyResourceGrants(
  client: GcpRestClient,
  environment: DeployEnvironment,
  group: readonly IamBinding[],
  options: ApplyOptions,
  tuning: IamApplyTuning,
): Promise<InfraPlanItem[]> {
  const [first] = group;
  if (first === undefined) return [];
  const endpoint = policyEndpoint(first.resource, environment);
  const delays = [...(tuning.propagationDelaysMs ?? DEFAULT_PROPAGATION_DELAYS_MS)];
  const sleep = tuning.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let conflictRetried = false;

  for (;;) {
    try {
      return await readModifyWrite(client, endpoint, group, options);
    } catch (error) {
      if (!conflictRetried && isGcpStatus(error, 409, 412)) {
        conflictRetried = true;
        continue;
      }
      const delay = isUnpropagatedMember(error) ? delays.shift() : undefined;
      if (delay === undefined) throw error;
      await sleep(delay);
    }
  }
}

function isUnpropagatedMember(error: unknown): boolean {
  return (
    error instanceof GcpApiError &&
    error.status === 400 &&
    /service account .* does not exist/i.test(error.message)
  );
}

async function readModifyWrite(
  client: GcpRestClient,
  endpoint: PolicyEndpoint,
  group: readonly IamBinding[],
  options: ApplyOptions,
): Promise<InfraPlanItem[]> {
  const read = await gcpCall<IamPolicy>(client, endpoint.read, endpoint.neededRole);
  if (read.status === 404) return skipped(group, endpoint.label);
  const missing = group.filter((b) => !policyGrants(read.data, b.role, b.member));
  if (missing.length > 0 && !options.dryRun) {
    const written = await gcpCall(
      client,
      endpoint.write(policyWithGrants(read.data, missing)),
      endpoint.neededRole,
    );
    // Deleted between our read and write: the same answer as a 404 on the read.
    if (written.status === 404) return skipped(group, endpoint.label);
  }
  return group.map((binding) => ({
    action: missing.includes(binding) ? 'create' : 'unchanged',
    kind: 'iam-binding',
    name: planName(binding, endpoint.label),
    changes: [],
    note: binding.reason,
  }));
}

function skipped(group: readonly IamBinding[], label: string): InfraPlanItem[] {
  return group.map((binding) => ({
    action: 'skip',
    kind: 'iam-binding',
    name: planName(binding, label),
    changes: [],
    note: `${label} does not exist yet (dry run, or not deployed yet): the first apply that finds it grants this`,
  }));
}
