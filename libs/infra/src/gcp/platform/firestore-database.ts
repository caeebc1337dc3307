import type { DeployEnvironment } from '../../deployment-model';
import { InfraError } from '../../infra.errors';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { gcpCall, isGcpStatus } from '../gcp-call';

export const FIRESTORE_API = 'https://firestore.googleapis.com/v1';
const NEEDED_ROLE = 'roles/datastore.owner';

interface DatabaseResource {
  name?: string;
  locationId?: string;
  type?: string;
}

export interface LongRunningOperation {
  name?: string;
  done?: boolean;
  error?: { code?: number; message?: string };
}

export interface OperationWaitTuning {
  /** Between polls of a long-running operation. Default 2 s. */
  pollMs?: number;
  /** Give up after. Default 5 minutes (a database is usually ready within a minute). */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export function firestoreDatabaseName(project: string): string {
  return `projects/${project}/databases/(default)`;
}

/** Polls `GET <api>/<operation.name>` until done; throws the operation's error. */
export async function waitForOperation(
  client: GcpRestClient,
  api: string,
  operation: LongRunningOperation,
  what: string,
  tuning: OperationWaitTuning = {},
): Promise<void> {
  const sleep = tuning.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = Date.now() + (tuning.timeoutMs ?? 5 * 60_000);
  let current = operation;
  for (;;) {
    if (current.done === true) {
      if (current.error !== undefined) {
        throw new InfraError(`${what} failed: ${current.error.message ?? 'no message'}`, {
          details: {
            operation: current.name,
            code: current.error.code,
          },
        });
      }
      return;
    }
    if (current.name === undefined) {
      throw new InfraError(`${what}: the API returned an operation without a name`);
    }
    if (Date.now() > deadline) {
      throw new InfraError(`${what} did not finish in time; run infra apply again later`, {
        details: {
          operation: current.name,
        },
      });
    }
    await sleep(tuning.pollMs ?? 2_000);
    const polled = await gcpCall<LongRunningOperation>(
      client,
      { method: 'GET', url: `${api}/${current.name}` },
      NEEDED_ROLE,
    );
    if (polled.status === 404) {
      throw new InfraError(`${what}: operation ${current.name} disappeared`);
    }
    current = polled.data;
  }
}

export interface FirestoreDatabaseResult {
  item: InfraPlanItem;
  /** Whether the database exists after this step (false only in a dry run that would create it). */
  exists: boolean;
}

/**
 * The project's `(default)` database in Firestore native mode at the environment's region: created
 * when missing (and waited for: indexes and rules need it). An existing database is never changed:
 * its location and mode are fixed at creation, so a mismatch is reported (location) or refused
 * (Datastore mode: TDA's stores need native mode).
 */
export async function applyFirestoreDatabase(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
  tuning: OperationWaitTuning = {},
): Promise<FirestoreDatabaseResult> {
  const name = firestoreDatabaseName(environment.project);
  const current = await gcpCall<DatabaseResource>(
    client,
    { method: 'GET', url: `${FIRESTORE_API}/${name}` },
    NEEDED_ROLE,
  );
  const item = { kind: 'firestore-database', name };
  if (current.status !== 404) {
    if (current.data.type !== undefined && current.data.type !== 'FIRESTORE_NATIVE') {
      throw new InfraError(
        `${name} is in ${current.data.type}; TDA needs Firestore native mode (the mode of a database cannot be changed: use another project)`,
        { details: { database: name, type: current.data.type } },
      );
    }
    const location = current.data.locationId;
    return {
      exists: true,
      item: {
        ...item,
        action: 'unchanged',
        changes: [],
        ...(location !== undefined && location !== environment.region
          ? {
              note: `located in ${location}, not ${environment.region} (a database cannot move; the services work, with cross-region latency)`,
            }
          : {}),
      },
    };
  }
  const created = {
    exists: !options.dryRun,
    item: {
      ...item,
      action: 'create' as const,
      changes: [],
      note: `native mode, ${environment.region}`,
    },
  };
  if (options.dryRun) return created;
  let operation: LongRunningOperation;
  try {
    const response = await gcpCall<LongRunningOperation>(
      client,
      {
        method: 'POST',
        url: `${FIRESTORE_API}/projects/${environment.project}/databases`,
        params: { databaseId: '(default)' },
        body: { type: 'FIRESTORE_NATIVE', locationId: environment.region },
      },
      NEEDED_ROLE,
    );
    operation = response.data;
  } catch (error) {
    // Created concurrently (another apply, the console): it exists, which is what we wanted.
    if (isGcpStatus(error, 409)) {
      return { exists: true, item: { ...item, action: 'unchanged', changes: [] } };
    }
    throw error;
  }
  await waitForOperation(client, FIRESTORE_API, operation, `creating ${name}`, tuning);
  return created;
}
