import {
  SCHEDULER_ACCOUNT_ID,
  serviceAccountEmail,
  serviceDeployment,
  type DeployableService,
  type DeployEnvironment,
} from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { createMissing, gcpCall } from '../gcp-call';
import { NOT_DEPLOYED_NOTE } from './cloud-run-services';

export const CLOUD_SCHEDULER_API = 'https://cloudscheduler.googleapis.com/v1';
const NEEDED_ROLE = 'roles/cloudscheduler.admin';

/** A Cloud Scheduler job calling a TDA Service with an OIDC token of tda-scheduler. */
export interface SchedulerJobSpec {
  /** Job id (the last segment of its name). */
  id: string;
  description: string;
  /** unix-cron. */
  schedule: string;
  timeZone: string;
  /** The Cloud Run Service called; the job waits (skip) until it is deployed. */
  target: DeployableService;
  /** Path and query appended to the Service URL. */
  path: string;
  /**
   * The target's env variable holding the OIDC audience it checks (its Cloud Run custom audience);
   * the token's audience is that value, or the Service URL when the target sets none (Cloud Run
   * IAM accepts its own URL).
   */
  audienceEnv?: string;
  httpMethod: 'POST' | 'GET';
  /** How long one attempt may take (15 s .. 30 min); the Service's request timeout at most. */
  attemptDeadlineSeconds: number;
  retry: {
    retryCount: number;
    /** 0: no limit beyond retryCount. */
    maxRetryDurationSeconds: number;
    minBackoffSeconds: number;
    maxBackoffSeconds: number;
    maxDoublings: number;
  };
}

/**
 * How Cloud Scheduler calls the orchestrator's admin API: tda-scheduler's OIDC token with the
 * audience the orchestrator checks, in UTC (a job's own slots, if any, are the orchestrator's
 * business).
 */
const ORCHESTRATOR_ADMIN_CALL = {
  timeZone: 'Etc/UTC',
  target: 'orchestrator',
  audienceEnv: 'TDA_ADMIN_OIDC_AUDIENCE',
  httpMethod: 'POST',
  // The orchestrator's request timeout (deployment model): a longer attempt would be cut anyway.
  attemptDeadlineSeconds: 60,
  // One quick retry of a failed call (e.g. a cold start 503); the next minute's run follows anyway.
  retry: {
    retryCount: 1,
    maxRetryDurationSeconds: 0,
    minBackoffSeconds: 10,
    maxBackoffSeconds: 30,
    maxDoublings: 1,
  },
} as const satisfies Omit<SchedulerJobSpec, 'id' | 'description' | 'schedule' | 'path'>;

/** Scheduled calls as code: a later schedule is one more entry. */
export const SCHEDULER_JOBS: readonly SchedulerJobSpec[] = [
  {
    ...ORCHESTRATOR_ADMIN_CALL,
    id: 'tda-reconcile',
    description:
      'TDA reconciler pass every minute (POST /admin/reconcile; managed by tda infra apply)',
    schedule: '* * * * *',
    // The artifact check reads every artifact of every run: an operator's request, not every minute.
    path: '/admin/reconcile?artifacts=false',
  },
  {
    ...ORCHESTRATOR_ADMIN_CALL,
    id: 'tda-schedules-tick',
    description:
      'TDA flow schedules tick every minute: fires every due schedule slot (POST /admin/schedules/tick; managed by tda infra apply)',
    // Every minute in UTC: each call fires every due slot, computed by the orchestrator in the
    // schedule's own IANA time zone, so a finer or zoned job would add nothing.
    schedule: '* * * * *',
    path: '/admin/schedules/tick',
  },
];

interface SchedulerJobResource {
  name?: string;
  description?: string;
  schedule?: string;
  timeZone?: string;
  state?: string;
  attemptDeadline?: string;
  retryConfig?: {
    retryCount?: number;
    maxRetryDuration?: string;
    minBackoffDuration?: string;
    maxBackoffDuration?: string;
    maxDoublings?: number;
  };
  httpTarget?: {
    uri?: string;
    httpMethod?: string;
    oidcToken?: { serviceAccountEmail?: string; audience?: string };
  };
}

export function schedulerJobName(environment: DeployEnvironment, id: string): string {
  return `projects/${environment.project}/locations/${environment.region}/jobs/${id}`;
}

/** The job resource infra apply writes for `spec` calling the Service at `serviceUrl`. */
export function schedulerJobResource(
  environment: DeployEnvironment,
  spec: SchedulerJobSpec,
  serviceUrl: string,
): SchedulerJobResource {
  const { retry } = spec;
  const audience =
    (spec.audienceEnv === undefined
      ? undefined
      : serviceDeployment(spec.target).env(environment)[spec.audienceEnv]) ?? serviceUrl;
  return {
    name: schedulerJobName(environment, spec.id),
    description: spec.description,
    schedule: spec.schedule,
    timeZone: spec.timeZone,
    attemptDeadline: `${spec.attemptDeadlineSeconds}s`,
    retryConfig: {
      retryCount: retry.retryCount,
      maxRetryDuration: `${retry.maxRetryDurationSeconds}s`,
      minBackoffDuration: `${retry.minBackoffSeconds}s`,
      maxBackoffDuration: `${retry.maxBackoffSeconds}s`,
      maxDoublings: retry.maxDoublings,
    },
    httpTarget: {
      uri: `${serviceUrl}${spec.path}`,
      httpMethod: spec.httpMethod,
      // Cloud Run's IAM check (invoker) and then the Service itself check the token's audience.
      oidcToken: {
        serviceAccountEmail: serviceAccountEmail(SCHEDULER_ACCOUNT_ID, environment.project),
        audience,
      },
    },
  };
}

/** `"60s"`, `"60.000s"` → 60; absent → 0 (proto3 omits zero values). */
function durationSeconds(value: string | undefined): number {
  if (value === undefined) return 0;
  const match = /^(-?[0-9.]+)s$/.exec(value);
  return match === null ? Number.NaN : Number(match[1]);
}

/** The fields infra apply owns, flattened for a field-level diff. */
function comparable(job: SchedulerJobResource): Record<string, string | number | null> {
  return {
    description: job.description ?? null,
    schedule: job.schedule ?? null,
    timeZone: job.timeZone ?? null,
    attemptDeadlineSeconds: durationSeconds(job.attemptDeadline ?? '180s'),
    retryCount: job.retryConfig?.retryCount ?? 0,
    maxRetryDurationSeconds: durationSeconds(job.retryConfig?.maxRetryDuration),
    minBackoffSeconds: durationSeconds(job.retryConfig?.minBackoffDuration),
    maxBackoffSeconds: durationSeconds(job.retryConfig?.maxBackoffDuration),
    maxDoublings: job.retryConfig?.maxDoublings ?? 0,
    uri: job.httpTarget?.uri ?? null,
    httpMethod: job.httpTarget?.httpMethod ?? null,
    oidcServiceAccountEmail: job.httpTarget?.oidcToken?.serviceAccountEmail ?? null,
    oidcAudience: job.httpTarget?.oidcToken?.audience ?? null,
  };
}

const UPDATE_MASK = 'description,schedule,timeZone,attemptDeadline,retryConfig,httpTarget';

/**
 * Creates each job of `jobs`, patches drifted ones (the fields above; headers Cloud Scheduler adds
 * are left alone) and leaves matching ones. A job whose target Service is not deployed yet is
 * `skip` (its URL is the token audience). A PAUSED job is patched but not resumed: pausing is an
 * operator's decision. Jobs not in the list are never touched.
 */
export async function applySchedulerJobs(
  client: GcpRestClient,
  environment: DeployEnvironment,
  serviceUrls: ReadonlyMap<string, string | null>,
  options: ApplyOptions,
  jobs: readonly SchedulerJobSpec[] = SCHEDULER_JOBS,
): Promise<InfraPlanItem[]> {
  const items: InfraPlanItem[] = [];
  for (const spec of jobs) {
    items.push(await applySchedulerJob(client, environment, spec, serviceUrls, options));
  }
  return items;
}

async function applySchedulerJob(
  client: GcpRestClient,
  environment: DeployEnvironment,
  spec: SchedulerJobSpec,
  serviceUrls: ReadonlyMap<string, string | null>,
  options: ApplyOptions,
): Promise<InfraPlanItem> {
  const name = schedulerJobName(environment, spec.id);
  const item = { kind: 'scheduler-job', name: spec.id };
  const serviceUrl = serviceUrls.get(`tda-${spec.target}`) ?? null;
  if (serviceUrl === null) {
    return {
      ...item,
      action: 'skip',
      changes: [],
      note: `tda-${spec.target}: ${NOT_DEPLOYED_NOTE}`,
    };
  }
  const wanted = schedulerJobResource(environment, spec, serviceUrl);
  const current = await gcpCall<SchedulerJobResource>(
    client,
    { method: 'GET', url: `${CLOUD_SCHEDULER_API}/${name}` },
    NEEDED_ROLE,
  );
  const note = `${spec.schedule} (${spec.timeZone}) → ${spec.httpMethod} ${wanted.httpTarget?.uri ?? ''}`;
  if (current.status === 404) {
    return createMissing(
      client,
      {
        method: 'POST',
        url: `${CLOUD_SCHEDULER_API}/projects/${environment.project}/locations/${environment.region}/jobs`,
        body: wanted,
      },
      NEEDED_ROLE,
      options,
      item,
      { created: note, conflict: 'created concurrently' },
    );
  }
  const observed = comparable(current.data);
  const desired = comparable(wanted);
  const changes = Object.keys(desired)
    .filter((field) => observed[field] !== desired[field])
    .map((field) => ({ field, from: observed[field], to: desired[field] }));
  const paused =
    current.data.state === 'PAUSED' ? 'PAUSED (left paused: resume it deliberately)' : undefined;
  if (changes.length === 0) {
    return {
      ...item,
      action: 'unchanged',
      changes,
      ...(paused === undefined ? {} : { note: paused }),
    };
  }
  if (!options.dryRun) {
    await gcpCall(
      client,
      {
        method: 'PATCH',
        url: `${CLOUD_SCHEDULER_API}/${name}`,
        params: { updateMask: UPDATE_MASK },
        body: wanted,
      },
      NEEDED_ROLE,
    );
  }
  return { ...item, action: 'update', changes, note: paused ?? note };
}
