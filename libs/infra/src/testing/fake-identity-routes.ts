import type { GcpRestResponse } from '../gcp/gcp-rest.client';
import type { FakeGcpApi, FakeRouteContext } from './fake-gcp-api';
import { apiError, bodyOf, group, NAME, notFound, ok, okOrNotFound, SEG } from './fake-responses';

/**
 * FakeGcpApi routes for the identity and storage APIs `tda infra apply` calls: Resource Manager
 * (project, project IAM), IAM service accounts and their IAM, Cloud Storage buckets and their IAM, Secret
 * Manager secrets and their IAM, Artifact Registry repositories, and the getIamPolicy /
 * setIamPolicy methods of Pub/Sub topics and subscriptions and Cloud Run services.
 *
 * Store keys (FakeGcpApi.resources) are full resource names: `projects/{p}/serviceAccounts/{email}`,
 * `projects/_/buckets/{b}`, `projects/{p}/secrets/{s}`,
 * `projects/{p}/locations/{r}/repositories/{id}`, `projects/{p}/topics/{t}`,
 * `projects/{p}/subscriptions/{s}`, `projects/{p}/locations/{r}/services/{s}`. A topic,
 * subscription or Cloud Run service exists when its key is set (by the routes of those APIs or
 * by a test); its IAM policy (and a service account's) is kept at `<name>#iam`. The fake models one project: any project
 * id resolves to it, with `projectNumber`.
 *
 * Modelled like the real APIs: 404 for a missing resource, 409 ALREADY_EXISTS on a duplicate
 * create, etags on policies (a stale etag on setIamPolicy is 409 ABORTED, 412 on Storage), a
 * setIamPolicy naming an unknown service account of the project is 400 INVALID_ARGUMENT, and a
 * role of another service on a Pub/Sub/Storage/Secret/Run resource is 400.
 */
export interface IdentityRoutesOptions {
  projectNumber: string;
  /**
   * setIamPolicy calls (any resource) that still reject a newly created service account as
   * unknown, like IAM's propagation delay. Default 0.
   */
  iamPropagationLag?: number;
}

export interface FakeIamPolicy {
  version?: number;
  etag?: string;
  bindings?: { role: string; members?: string[]; condition?: unknown }[];
  [field: string]: unknown;
}

export interface IdentityFakeControl {
  /** The stored IAM policy of a full resource name (`projects/p`, `projects/_/buckets/b`, ...). */
  policy(resourceName: string): FakeIamPolicy | undefined;
  /**
   * A concurrent writer: `change` is applied to the stored policy (and its etag renewed) just
   * before the next setIamPolicy on `resourceName` is evaluated, so that call sees a stale etag.
   */
  interleaveBeforeNextSet(resourceName: string, change: (policy: FakeIamPolicy) => void): void;
  /** What `gcloud secrets versions add` does. */
  addSecretVersion(project: string, secret: string, state?: 'ENABLED' | 'DISABLED'): void;
}

interface FakeSecret {
  name: string;
  replication: unknown;
  createTime: string;
  versions: { name: string; state: string }[];
}

/** Which roles a resource type accepts (the real APIs reject other services' roles). */
const ROLE_PREFIX: Record<string, RegExp> = {
  topics: /^roles\/pubsub\./,
  subscriptions: /^roles\/pubsub\./,
  buckets: /^roles\/storage\./,
  secrets: /^roles\/secretmanager\./,
  services: /^roles\/run\./,
  // Roles whose permissions apply to a service account (tokenCreator, serviceAccountUser, ...).
  serviceAccounts: /^roles\/iam\./,
};

export function installIdentityRoutes(
  fake: FakeGcpApi,
  options: IdentityRoutesOptions,
): IdentityFakeControl {
  const resources = fake.resources;
  const interleaved = new Map<string, (policy: FakeIamPolicy) => void>();
  /** Service account email → setIamPolicy calls that still reject it. */
  const invisible = new Map<string, number>();
  let etagCounter = 0;
  let operationCounter = 0;
  const now = (): string => new Date(Date.UTC(2025, 0, 1)).toISOString();
  const nextEtag = (): string => Buffer.from(`etag-${++etagCounter}`).toString('base64');

  const policyKey = (resourceName: string): string => `${resourceName}#iam`;
  const readPolicy = (resourceName: string, initial: () => FakeIamPolicy): FakeIamPolicy => {
    const stored = resources.get(policyKey(resourceName)) as FakeIamPolicy | undefined;
    if (stored !== undefined) return stored;
    const created = { ...initial(), etag: nextEtag() };
    resources.set(policyKey(resourceName), created);
    return created;
  };
  const emptyPolicy = (): FakeIamPolicy => ({});

  /** The shared setIamPolicy semantics; `policy` is the request's policy. */
  const writePolicy = (
    resourceName: string,
    resourceType: string,
    policy: FakeIamPolicy,
    initial: () => FakeIamPolicy,
    staleStatus: 409 | 412,
  ): GcpRestResponse => {
    const current = readPolicy(resourceName, initial);
    const concurrent = interleaved.get(resourceName);
    if (concurrent !== undefined) {
      interleaved.delete(resourceName);
      concurrent(current);
      current.etag = nextEtag();
    }
    if (policy.etag !== undefined && policy.etag !== current.etag) {
      return staleStatus === 412
        ? apiError(412, 'FAILED_PRECONDITION', 'Precondition Failed')
        : apiError(
            409,
            'ABORTED',
            'There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.',
          );
    }
    const allowedRoles = ROLE_PREFIX[resourceType];
    for (const binding of policy.bindings ?? []) {
      if (allowedRoles !== undefined && !allowedRoles.test(binding.role)) {
        return apiError(
          400,
          'INVALID_ARGUMENT',
          `Role ${binding.role} is not supported for this resource.`,
        );
      }
      if (binding.condition !== undefined && (policy.version ?? 1) < 3) {
        return apiError(400, 'INVALID_ARGUMENT', 'Conditional bindings require policy version 3.');
      }
      for (const member of binding.members ?? []) {
        const unknown = unknownServiceAccount(member);
        if (unknown !== undefined) {
          return apiError(400, 'INVALID_ARGUMENT', `Service account ${unknown} does not exist.`);
        }
      }
    }
    const stored: FakeIamPolicy = { ...policy, etag: nextEtag() };
    resources.set(policyKey(resourceName), stored);
    return ok(stored);
  };

  /** A `serviceAccount:` member of a project-owned account the fake does not know (yet). */
  const unknownServiceAccount = (member: string): string | undefined => {
    const match = /^serviceAccount:(([^@]+)@([^.]+)\.iam\.gserviceaccount\.com)$/.exec(member);
    if (match === null) return undefined;
    const [, email = '', , project = ''] = match;
    // Google-managed service agents (…@gcp-sa-pubsub.iam.gserviceaccount.com) always exist.
    if (project.startsWith('gcp-sa-')) return undefined;
    if (!resources.has(`projects/${project}/serviceAccounts/${email}`)) return email;
    const lag = invisible.get(email) ?? 0;
    if (lag <= 0) return undefined;
    invisible.set(email, lag - 1);
    return email;
  };

  /** getIamPolicy GET + setIamPolicy POST of a resource stored at `projects/{p}/{collection}/{id}`. */
  const policyRoutes = (service: string, prefix: string, collection: string): void => {
    // Cloud Run services sit under a location: `projects/p/locations/r/services/s`.
    const scope = collection === 'services' ? `(locations/[^/]+/services)` : `(${collection})`;
    const nameRegex = (method: string): RegExp =>
      new RegExp(`^${prefix}/projects/${SEG}/${scope}/${NAME}:${method}$`);
    const nameOf = (context: FakeRouteContext): string =>
      `projects/${group(context, 0)}/${group(context, 1)}/${group(context, 2)}`;
    fake.on('GET', service, nameRegex('getIamPolicy'), (context) => {
      const name = nameOf(context);
      if (!resources.has(name)) return notFound(`Resource ${name}`);
      return ok(readPolicy(name, emptyPolicy));
    });
    fake.on('POST', service, nameRegex('setIamPolicy'), (context) => {
      const name = nameOf(context);
      if (!resources.has(name)) return notFound(`Resource ${name}`);
      const policy = bodyOf<{ policy: FakeIamPolicy }>(context.request).policy ?? {};
      return writePolicy(name, collection, policy, emptyPolicy, 409);
    });
  };

  // --- Resource Manager v1 ---
  const projectPolicy = (project: string) => (): FakeIamPolicy => ({
    version: 1,
    bindings: [{ role: 'roles/owner', members: [`user:owner@${project}.example.com`] }],
  });
  fake.on('GET', 'cloudresourcemanager', new RegExp(`^/v1/projects/${NAME}$`), (context) =>
    ok({
      projectId: group(context, 0),
      projectNumber: options.projectNumber,
      name: group(context, 0),
      lifecycleState: 'ACTIVE',
    }),
  );
  fake.on(
    'POST',
    'cloudresourcemanager',
    new RegExp(`^/v1/projects/${NAME}:getIamPolicy$`),
    (context) => {
      const project = group(context, 0);
      return ok(readPolicy(`projects/${project}`, projectPolicy(project)));
    },
  );
  fake.on(
    'POST',
    'cloudresourcemanager',
    new RegExp(`^/v1/projects/${NAME}:setIamPolicy$`),
    (context) => {
      const project = group(context, 0);
      const policy = bodyOf<{ policy: FakeIamPolicy }>(context.request).policy ?? {};
      return writePolicy(`projects/${project}`, 'project', policy, projectPolicy(project), 409);
    },
  );

  // --- IAM service accounts ---
  const accountPath = new RegExp(`^/v1/projects/${SEG}/serviceAccounts/${NAME}$`);
  fake.on('GET', 'iam', accountPath, (context) => {
    const name = `projects/${group(context, 0)}/serviceAccounts/${group(context, 1)}`;
    return okOrNotFound(resources.get(name), `Service account ${group(context, 1)}`);
  });
  fake.on('POST', 'iam', new RegExp(`^/v1/projects/${SEG}/serviceAccounts$`), (context) => {
    const project = group(context, 0);
    const body = bodyOf<{
      accountId: string;
      serviceAccount: { displayName?: string; description?: string };
    }>(context.request);
    const accountId = body.accountId ?? '';
    if (!/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(accountId)) {
      return apiError(400, 'INVALID_ARGUMENT', `Invalid account id ${accountId}.`);
    }
    const email = `${accountId}@${project}.iam.gserviceaccount.com`;
    const name = `projects/${project}/serviceAccounts/${email}`;
    if (resources.has(name)) {
      return apiError(
        409,
        'ALREADY_EXISTS',
        `Service account ${accountId} already exists within project projects/${project}.`,
      );
    }
    const account = {
      name,
      projectId: project,
      uniqueId: `1${String(resources.size).padStart(20, '0')}`,
      email,
      displayName: body.serviceAccount?.displayName ?? '',
      description: body.serviceAccount?.description ?? '',
      etag: 'MDEwMjE5MjA=',
      oauth2ClientId: '1',
    };
    resources.set(name, account);
    const lag = options.iamPropagationLag ?? 0;
    if (lag > 0) invisible.set(email, lag);
    return ok(account);
  });
  fake.on('PATCH', 'iam', accountPath, (context) => {
    const name = `projects/${group(context, 0)}/serviceAccounts/${group(context, 1)}`;
    const account = resources.get(name) as Record<string, unknown> | undefined;
    if (account === undefined) return notFound(`Service account ${group(context, 1)}`);
    const body = bodyOf<{ serviceAccount: Record<string, unknown>; updateMask: string }>(
      context.request,
    );
    if (body.updateMask === undefined || body.updateMask === '') {
      return apiError(400, 'INVALID_ARGUMENT', 'updateMask is required.');
    }
    const updated = { ...account };
    for (const field of body.updateMask.split(',')) {
      if (field !== 'displayName' && field !== 'description') {
        return apiError(400, 'INVALID_ARGUMENT', `Field ${field} cannot be updated.`);
      }
      updated[field] = body.serviceAccount?.[field] ?? '';
    }
    resources.set(name, updated);
    return ok(updated);
  });

  // IAM v1 serves a service account's policy by POST for both methods (a 404 for an account
  // that does not exist).
  const accountPolicyPath = (method: string): RegExp =>
    new RegExp(`^/v1/projects/${SEG}/serviceAccounts/${NAME}:${method}$`);
  const accountName = (context: FakeRouteContext): string =>
    `projects/${group(context, 0)}/serviceAccounts/${group(context, 1)}`;
  fake.on('POST', 'iam', accountPolicyPath('getIamPolicy'), (context) => {
    const name = accountName(context);
    if (!resources.has(name)) return notFound(`Service account ${group(context, 1)}`);
    return ok(readPolicy(name, emptyPolicy));
  });
  fake.on('POST', 'iam', accountPolicyPath('setIamPolicy'), (context) => {
    const name = accountName(context);
    if (!resources.has(name)) return notFound(`Service account ${group(context, 1)}`);
    const policy = bodyOf<{ policy: FakeIamPolicy }>(context.request).policy ?? {};
    return writePolicy(name, 'serviceAccounts', policy, emptyPolicy, 409);
  });

  // --- Cloud Storage JSON API ---
  const bucketName = (context: FakeRouteContext): string =>
    `projects/_/buckets/${group(context, 0)}`;
  const bucketPolicy = (bucket: { projectNumber: string }) => (): FakeIamPolicy => ({
    kind: 'storage#policy',
    version: 1,
    bindings: [
      {
        role: 'roles/storage.legacyBucketOwner',
        members: [`projectEditor:${bucket.projectNumber}`, `projectOwner:${bucket.projectNumber}`],
      },
      {
        role: 'roles/storage.legacyBucketReader',
        members: [`projectViewer:${bucket.projectNumber}`],
      },
    ],
  });
  fake.on('GET', 'storage', new RegExp(`^/storage/v1/b/${SEG}$`), (context) => {
    return okOrNotFound(resources.get(bucketName(context)), 'The specified bucket does not exist.');
  });
  fake.on('POST', 'storage', /^\/storage\/v1\/b$/, (context) => {
    const project = context.request.params?.['project'];
    if (project === undefined)
      return apiError(400, 'INVALID_ARGUMENT', 'Required parameter: project');
    const body = bodyOf<{
      name: string;
      location: string;
      iamConfiguration: {
        uniformBucketLevelAccess?: { enabled?: boolean };
        publicAccessPrevention?: string;
      };
    }>(context.request);
    const name = `projects/_/buckets/${body.name ?? ''}`;
    if (resources.has(name)) {
      return apiError(
        409,
        'ALREADY_EXISTS',
        'Your previous request to create the named bucket succeeded and you already own it.',
      );
    }
    const bucket = {
      kind: 'storage#bucket',
      id: body.name,
      name: body.name,
      projectNumber: options.projectNumber,
      metageneration: '1',
      location: (body.location ?? 'US').toUpperCase(),
      locationType: 'region',
      storageClass: 'STANDARD',
      timeCreated: now(),
      iamConfiguration: {
        bucketPolicyOnly: {
          enabled: body.iamConfiguration?.uniformBucketLevelAccess?.enabled === true,
        },
        uniformBucketLevelAccess: {
          enabled: body.iamConfiguration?.uniformBucketLevelAccess?.enabled === true,
        },
        publicAccessPrevention: body.iamConfiguration?.publicAccessPrevention ?? 'inherited',
      },
    };
    resources.set(name, bucket);
    return ok(bucket);
  });
  fake.on('PATCH', 'storage', new RegExp(`^/storage/v1/b/${SEG}$`), (context) => {
    const name = bucketName(context);
    const bucket = resources.get(name) as
      { metageneration: string; iamConfiguration: Record<string, unknown> } | undefined;
    if (bucket === undefined) return notFound('The specified bucket does not exist.');
    const patch = bodyOf<{ iamConfiguration: Record<string, unknown> }>(context.request);
    const updated = {
      ...bucket,
      metageneration: String(Number(bucket.metageneration) + 1),
      iamConfiguration: { ...bucket.iamConfiguration, ...(patch.iamConfiguration ?? {}) },
    };
    resources.set(name, updated);
    return ok(updated);
  });
  fake.on('GET', 'storage', new RegExp(`^/storage/v1/b/${SEG}/iam$`), (context) => {
    const bucket = resources.get(bucketName(context)) as { projectNumber: string } | undefined;
    if (bucket === undefined) return notFound('The specified bucket does not exist.');
    return ok({
      resourceId: bucketName(context),
      ...readPolicy(bucketName(context), bucketPolicy(bucket)),
    });
  });
  fake.on('PUT', 'storage', new RegExp(`^/storage/v1/b/${SEG}/iam$`), (context) => {
    const bucket = resources.get(bucketName(context)) as { projectNumber: string } | undefined;
    if (bucket === undefined) return notFound('The specified bucket does not exist.');
    const policy = bodyOf<FakeIamPolicy>(context.request) as FakeIamPolicy;
    return writePolicy(bucketName(context), 'buckets', policy, bucketPolicy(bucket), 412);
  });

  // --- Secret Manager v1 ---
  const secretKey = (context: FakeRouteContext): string =>
    `projects/${group(context, 0)}/secrets/${group(context, 1)}`;
  const secretView = (secret: FakeSecret): unknown => ({
    name: secret.name,
    replication: secret.replication,
    createTime: secret.createTime,
    etag: '"1"',
  });
  fake.on(
    'GET',
    'secretmanager',
    new RegExp(`^/v1/projects/${SEG}/secrets/${NAME}$`),
    (context) => {
      const secret = resources.get(secretKey(context)) as FakeSecret | undefined;
      return secret === undefined
        ? notFound(`Secret [${secretKey(context)}]`)
        : ok(secretView(secret));
    },
  );
  fake.on('POST', 'secretmanager', new RegExp(`^/v1/projects/${SEG}/secrets$`), (context) => {
    const project = group(context, 0);
    const secretId = context.request.params?.['secretId'] ?? '';
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(secretId)) {
      return apiError(400, 'INVALID_ARGUMENT', 'Invalid secret id.');
    }
    const key = `projects/${project}/secrets/${secretId}`;
    if (resources.has(key)) {
      return apiError(
        409,
        'ALREADY_EXISTS',
        `Secret [projects/${options.projectNumber}/secrets/${secretId}] already exists.`,
      );
    }
    const replication = bodyOf<{ replication: unknown }>(context.request).replication;
    if (replication === undefined) {
      return apiError(400, 'INVALID_ARGUMENT', 'Secret.replication is required.');
    }
    const secret: FakeSecret = {
      name: `projects/${options.projectNumber}/secrets/${secretId}`,
      replication,
      createTime: now(),
      versions: [],
    };
    resources.set(key, secret);
    return ok(secretView(secret));
  });
  fake.on(
    'GET',
    'secretmanager',
    new RegExp(`^/v1/projects/${SEG}/secrets/${NAME}/versions/latest$`),
    (context) => {
      const secret = resources.get(secretKey(context)) as FakeSecret | undefined;
      const latest = secret?.versions.at(-1);
      return latest === undefined
        ? notFound(`Secret Version [${secretKey(context)}/versions/latest]`)
        : ok({ ...latest, createTime: now() });
    },
  );

  // --- Artifact Registry v1 ---
  const repositories = `^/v1/projects/${SEG}/locations/${SEG}/repositories`;
  fake.on('GET', 'artifactregistry', new RegExp(`${repositories}/${NAME}$`), (context) => {
    const name = `projects/${group(context, 0)}/locations/${group(context, 1)}/repositories/${group(context, 2)}`;
    return okOrNotFound(resources.get(name), `Requested entity was not found.`);
  });
  fake.on('POST', 'artifactregistry', new RegExp(`${repositories}$`), (context) => {
    const [project, location] = [group(context, 0), group(context, 1)];
    const repositoryId = context.request.params?.['repositoryId'] ?? '';
    const body = bodyOf<{ format: string; description: string }>(context.request);
    if (repositoryId === '' || body.format === undefined) {
      return apiError(400, 'INVALID_ARGUMENT', 'repositoryId and format are required.');
    }
    const name = `projects/${project}/locations/${location}/repositories/${repositoryId}`;
    if (resources.has(name)) {
      return apiError(409, 'ALREADY_EXISTS', `the repository already exists`);
    }
    // The real API finishes the operation seconds later; the fake makes it visible at once.
    resources.set(name, {
      name,
      format: body.format,
      description: body.description ?? '',
      mode: 'STANDARD_REPOSITORY',
      createTime: now(),
      updateTime: now(),
    });
    return ok({
      name: `projects/${project}/locations/${location}/operations/op-${++operationCounter}`,
      metadata: {
        '@type': 'type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata',
      },
    });
  });

  // --- IAM of secrets and of resources other routes create (Pub/Sub, Cloud Run) ---
  policyRoutes('secretmanager', '/v1', 'secrets');
  policyRoutes('pubsub', '/v1', 'topics');
  policyRoutes('pubsub', '/v1', 'subscriptions');
  policyRoutes('run', '/v2', 'services');

  return {
    policy: (resourceName) => resources.get(policyKey(resourceName)) as FakeIamPolicy | undefined,
    interleaveBeforeNextSet: (resourceName, change) => interleaved.set(resourceName, change),
    addSecretVersion: (project, secret, state = 'ENABLED') => {
      const stored = resources.get(`projects/${project}/secrets/${secret}`) as
        FakeSecret | undefined;
      if (stored === undefined) throw new Error(`fake: no secret ${secret}`);
      stored.versions.push({
        name: `${stored.name}/versions/${stored.versions.length + 1}`,
        state,
      });
    },
  };
}
