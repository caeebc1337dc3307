import type { DeployEnvironment } from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { gcpCall, isGcpStatus, withHint } from '../gcp-call';

interface BucketResource {
  name?: string;
  location?: string;
  iamConfiguration?: {
    uniformBucketLevelAccess?: { enabled?: boolean };
    publicAccessPrevention?: string;
  };
}

const NEEDED_ROLE = 'roles/storage.admin';
const TAKEN_HINT =
  'bucket names are global: if another project owns it, set artifactsBucket in deploy/environments.json';

/**
 * The artifacts bucket: in the region, uniform bucket-level access (IAM only, no object ACLs)
 * and public access prevention enforced (artifacts are private run data). Drift of those two is
 * patched back; a different location cannot be changed on an existing bucket, so it is `skip`
 * with a note. Never deleted.
 */
export async function applyArtifactsBucket(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
): Promise<InfraPlanItem[]> {
  const name = environment.artifactsBucket;
  const url = `https://storage.googleapis.com/storage/v1/b/${name}`;
  const item = { kind: 'bucket', name };
  const desiredIamConfiguration = {
    uniformBucketLevelAccess: { enabled: true },
    publicAccessPrevention: 'enforced',
  };

  let current;
  try {
    current = await gcpCall<BucketResource>(client, { method: 'GET', url }, NEEDED_ROLE);
  } catch (error) {
    // Storage answers 403 for a bucket that exists in a project we cannot see.
    throw isGcpStatus(error, 403) ? withHint(error, TAKEN_HINT) : error;
  }

  if (current.status === 404) {
    if (!options.dryRun) {
      try {
        await gcpCall(
          client,
          {
            method: 'POST',
            url: 'https://storage.googleapis.com/storage/v1/b',
            params: { project: environment.project },
            body: { name, location: environment.region, iamConfiguration: desiredIamConfiguration },
          },
          NEEDED_ROLE,
        );
      } catch (error) {
        // Not found by us but not creatable: someone else's bucket holds the global name.
        throw isGcpStatus(error, 409) ? withHint(error, TAKEN_HINT) : error;
      }
    }
    return [{ ...item, action: 'create', changes: [], note: `location ${environment.region}` }];
  }

  const iam = current.data.iamConfiguration ?? {};
  const changes: InfraPlanItem['changes'] = [];
  const uniform = iam.uniformBucketLevelAccess?.enabled === true;
  if (!uniform) {
    changes.push({ field: 'uniformBucketLevelAccess', from: uniform, to: true });
  }
  if (iam.publicAccessPrevention !== 'enforced') {
    changes.push({
      field: 'publicAccessPrevention',
      from: iam.publicAccessPrevention ?? 'inherited',
      to: 'enforced',
    });
  }
  // Storage reports locations upper-case (EUROPE-WEST1).
  const location = current.data.location ?? '';
  const locationNote =
    location.toLowerCase() === environment.region.toLowerCase()
      ? undefined
      : `location ${location} is fixed at creation (wanted ${environment.region}): artifacts stay there`;

  if (changes.length > 0 && !options.dryRun) {
    await gcpCall(
      client,
      { method: 'PATCH', url, body: { iamConfiguration: desiredIamConfiguration } },
      NEEDED_ROLE,
    );
  }
  if (changes.length > 0) {
    return [
      {
        ...item,
        action: 'update',
        changes,
        ...(locationNote === undefined ? {} : { note: locationNote }),
      },
    ];
  }
  if (locationNote !== undefined) {
    return [
      {
        ...item,
        action: 'skip',
        changes: [{ field: 'location', from: location, to: environment.region }],
        note: locationNote,
      },
    ];
  }
  return [{ ...item, action: 'unchanged', changes: [] }];
}
