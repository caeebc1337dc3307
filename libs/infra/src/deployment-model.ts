import { STEP_TYPES, type StepType } from '@tda/contracts';
import { stepEventsTopic, stepReadySubscription, stepReadyTopic } from '@tda/messaging';
import { STEP_TYPE_DESCRIPTORS, type AnyStepTypeDescriptor } from '@tda/step-types';

/**
 * What TDA deploys to Google Cloud, as data: the orchestrator, and one worker per step type
 * derived from its step type descriptor (@tda/step-types: kind, sizing, needs). The Cloud Run
 * manifests (deploy/cloudrun/<profile>/), skaffold.yaml, the images' Dockerfiles and build
 * targets, the service accounts and IAM bindings that `tda infra apply` creates, and the
 * structural checks all derive from this one description, so a role or an env variable cannot be
 * added in one place and forgotten in another.
 */

/** A deployable NX service (tagged `type:service`; cli and local-stack are not deployed). */
export type DeployableService = 'orchestrator' | AnyStepTypeDescriptor['service'];

/** The orchestrator, then one worker per described step type. */
export const DEPLOYABLE_SERVICES: readonly DeployableService[] = [
  'orchestrator',
  ...STEP_TYPE_DESCRIPTORS.map((d) => d.service),
];

/**
 * How the LLM worker reaches Gemini: `gemini-api` with an API key (the Secret Manager secret
 * tda-gemini-api-key), or `vertex-ai` with its own service account (Application Default
 * Credentials, roles/aiplatform.user) and no key at all.
 */
export const LLM_PROVIDERS = ['gemini-api', 'vertex-ai'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

/** One deployment target: a skaffold profile bound to a GCP project and region. */
export interface DeployEnvironment {
  /** skaffold profile name (`dev`, `prod`). */
  profile: string;
  project: string;
  /** Cloud Run, Artifact Registry, Scheduler and the Firestore database location. */
  region: string;
  /** Pub/Sub resource prefix (TDA_PUBSUB_PREFIX); default `tda`. */
  pubsubPrefix: string;
  /** Bucket of the artifacts (TDA_ARTIFACTS_BUCKET); globally unique, hence project-derived. */
  artifactsBucket: string;
  /** Runs admitted at once (TDA_MAX_RUNNING_RUNS) — sizing differs between dev and prod. */
  maxRunningRuns: number;
  /** Gemini API (key in Secret Manager) or Vertex AI (no key); default `gemini-api`. */
  llm: LlmProvider;
  /**
   * ccxt exchange id of the live exchange account ACCOUNT_EXPORT reads (API key and secret in
   * Secret Manager). Absent: paper accounts only, and no exchange secret is referenced.
   */
  exchangeAccount?: string;
}

/** Secret Manager secrets the services read (containers created by infra apply, values by you). */
export const SECRETS = {
  /** The orchestrator's admin API bearer token (TDA_API_TOKEN). */
  apiToken: 'tda-api-token',
  /** Gemini API key of the LLM worker (GEMINI_API_KEY); not referenced with `llm: vertex-ai`. */
  geminiApiKey: 'tda-gemini-api-key',
  /** API key of the live exchange account (TDA_ACCOUNT_CCXT_API_KEY); with `exchangeAccount` only. */
  exchangeApiKey: 'tda-exchange-api-key',
  /** API secret of the live exchange account (TDA_ACCOUNT_CCXT_SECRET); with `exchangeAccount` only. */
  exchangeApiSecret: 'tda-exchange-api-secret',
} as const;

/** Identities that are not a service's own: Pub/Sub push and Cloud Scheduler invoke with them. */
export const PUSH_INVOKER_ACCOUNT_ID = 'tda-pubsub-push';
export const SCHEDULER_ACCOUNT_ID = 'tda-scheduler';
/** Artifact Registry (docker) repository the images are pushed to. */
export const IMAGE_REPOSITORY = 'tda';

export function serviceAccountEmail(accountId: string, project: string): string {
  return `${accountId}@${project}.iam.gserviceaccount.com`;
}

export interface SecretEnv {
  /** Env variable the container sees. */
  env: string;
  /** Secret Manager secret id (same project); version `latest`. */
  secret: string;
}

/** A role on one resource for one of TDA's own service accounts. */
export interface ResourceRole {
  resource:
    | { type: 'project' }
    | { type: 'topic'; name: string }
    | { type: 'subscription'; name: string }
    | { type: 'bucket'; name: string }
    | { type: 'secret'; name: string };
  role: string;
  /** Why this service needs it (printed in the plan, kept in the README table). */
  reason: string;
}

export interface ServiceDeployment {
  project: DeployableService;
  /** The step type a worker serves (none for the orchestrator). */
  stepType?: StepType;
  /** npm packages loaded without a static import: the image's build installs them too. */
  runtimeDependencies: readonly string[];
  /** Image, skaffold artifact, Cloud Run resource and service account id. */
  name: string;
  /** Cloud Run Service (request-driven, has a URL) or Worker Pool (always-on, no URL). */
  kind: 'Service' | 'WorkerPool';
  /** How work reaches it. */
  ingress: 'private-http' | 'pubsub-push' | 'pubsub-pull';
  /** Why this kind and ingress (README, manifest annotation `tda.dev/why`). */
  why: string;
  /**
   * OIDC audience other Google identities call it with (Pub/Sub push, Cloud Scheduler): listed in
   * run.googleapis.com/custom-audiences so Cloud Run's IAM check accepts it, and checked again
   * by the service. The run.app URL is not known before the first deploy; this name is.
   */
  customAudience?: string;
  cpu: string;
  memory: string;
  /** Requests per instance (Service only). */
  concurrency?: number;
  /** Request timeout in seconds (Service only): longest step + finalize. */
  timeoutSeconds?: number;
  /** Service: min/max instances. Worker Pool: min is the manual instance count. */
  minInstances: number;
  maxInstances: number;
  /** CPU outside requests (streaming pull, timers) — required for pull consumers. */
  cpuAlwaysAllocated: boolean;
  /** Plain env (no secrets), given the environment. */
  env: (environment: DeployEnvironment) => Record<string, string>;
  /**
   * Secret env, given the environment. Cloud Run refuses to start a revision that references a
   * secret without a version, so a secret the environment does not use must not be referenced.
   */
  secrets: (environment: DeployEnvironment) => SecretEnv[];
  /** Least-privilege roles of its service account. */
  roles: (environment: DeployEnvironment) => ResourceRole[];
}

function backendEnv(environment: DeployEnvironment): Record<string, string> {
  return {
    TDA_BACKEND: 'gcp',
    GOOGLE_CLOUD_PROJECT: environment.project,
    TDA_PUBSUB_PREFIX: environment.pubsubPrefix,
    TDA_ARTIFACTS_BUCKET: environment.artifactsBucket,
    TDA_LOG_LEVEL: 'info',
  };
}

function pushWorkerEnv(name: string, environment: DeployEnvironment): Record<string, string> {
  return {
    ...backendEnv(environment),
    TDA_INGRESS: 'push',
    // The push subscription's OIDC audience (infra apply sets the same string); Cloud Run accepts
    // it because the Service lists it in run.googleapis.com/custom-audiences.
    TDA_PUSH_AUDIENCE: name,
    TDA_PUSH_SERVICE_ACCOUNT: serviceAccountEmail(PUSH_INVOKER_ACCOUNT_ID, environment.project),
  };
}

/**
 * The LLM worker's env with `llm: vertex-ai` (fields of @tda/llm llmEnv): Vertex AI with the
 * service account's Application Default Credentials in GOOGLE_CLOUD_PROJECT. `global` is the
 * client's own default (@tda/llm DEFAULT_VERTEX_LOCATION), written out so the manifest says where
 * requests go.
 */
const VERTEX_AI_ENV: Readonly<Record<string, string>> = {
  GOOGLE_GENAI_USE_VERTEXAI: 'true',
  GOOGLE_CLOUD_LOCATION: 'global',
};

const firestoreUser: ResourceRole = {
  resource: { type: 'project' },
  role: 'roles/datastore.user',
  reason: 'reads and writes flow_runs documents (Firestore has no per-collection IAM)',
};

function stepEventsPublisher(environment: DeployEnvironment): ResourceRole {
  return {
    resource: { type: 'topic', name: stepEventsTopic(environment.pubsubPrefix) },
    role: 'roles/pubsub.publisher',
    reason: 'publishes step events for the orchestrator',
  };
}

function artifactWriter(environment: DeployEnvironment): ResourceRole {
  return {
    resource: { type: 'bucket', name: environment.artifactsBucket },
    // objectAdmin on this one bucket: the deterministic artifact write checks and overwrites an
    // existing object (objectCreator cannot read or replace) and reads upstream artifacts.
    role: 'roles/storage.objectAdmin',
    reason: 'writes its artifacts and reads upstream artifacts',
  };
}

/** The roles of every worker: its run documents, its step events, its artifacts. */
function workerRoles(environment: DeployEnvironment): ResourceRole[] {
  return [firestoreUser, stepEventsPublisher(environment), artifactWriter(environment)];
}

/** A worker that reaches Gemini: the API key secret, or Vertex AI with its own identity. */
function llmRole(environment: DeployEnvironment): ResourceRole {
  return environment.llm === 'vertex-ai'
    ? {
        // The predefined role Google documents for calling Gemini on Vertex AI (it carries
        // aiplatform.endpoints.predict, which generateContent checks).
        resource: { type: 'project' },
        role: 'roles/aiplatform.user',
        reason: 'calls Gemini on Vertex AI',
      }
    : {
        resource: { type: 'secret', name: SECRETS.geminiApiKey },
        role: 'roles/secretmanager.secretAccessor',
        reason: 'reads the Gemini API key',
      };
}

/** What a worker that reads the live exchange account gets, when the environment has one. */
function exchangeAccountSecrets(environment: DeployEnvironment): SecretEnv[] {
  return environment.exchangeAccount === undefined
    ? []
    : [
        { env: 'TDA_ACCOUNT_CCXT_API_KEY', secret: SECRETS.exchangeApiKey },
        { env: 'TDA_ACCOUNT_CCXT_SECRET', secret: SECRETS.exchangeApiSecret },
      ];
}

/** The secrets a worker's needs reference in this environment (each one read as env). */
function neededSecrets(
  needs: AnyStepTypeDescriptor['deploy']['needs'],
  environment: DeployEnvironment,
): SecretEnv[] {
  return [
    ...(needs?.includes('llm') === true && environment.llm === 'gemini-api'
      ? [{ env: 'GEMINI_API_KEY', secret: SECRETS.geminiApiKey }]
      : []),
    ...(needs?.includes('exchange-account') === true ? exchangeAccountSecrets(environment) : []),
  ];
}

/** Least privilege: secretAccessor on each of these secrets only (one binding per secret). */
function secretAccessors(secrets: readonly SecretEnv[]): ResourceRole[] {
  return secrets.map((s) => ({
    resource: { type: 'secret', name: s.secret },
    role: 'roles/secretmanager.secretAccessor',
    reason: `reads the exchange account credential ${s.env}`,
  }));
}

/**
 * A step type's worker, from its descriptor: a Service fed by Pub/Sub push (request-driven,
 * scales to zero) or a Worker Pool pulling its subscription (always on, for long steps), with
 * the env, secrets and roles of what it needs.
 */
export function stepWorkerDeployment(descriptor: AnyStepTypeDescriptor): ServiceDeployment {
  const { service: project, stepType, deploy } = descriptor;
  const name = `tda-${project}`;
  const llm = deploy.needs?.includes('llm') === true;
  const push = deploy.kind === 'Service';
  return {
    project,
    stepType,
    name,
    kind: deploy.kind,
    ingress: push ? 'pubsub-push' : 'pubsub-pull',
    ...(push ? { customAudience: name } : {}),
    why: deploy.why,
    cpu: deploy.cpu,
    memory: deploy.memory,
    ...(deploy.concurrency === undefined ? {} : { concurrency: deploy.concurrency }),
    ...(deploy.timeoutSeconds === undefined ? {} : { timeoutSeconds: deploy.timeoutSeconds }),
    minInstances: deploy.minInstances,
    maxInstances: deploy.maxInstances,
    // Push Services get CPU only during requests; a pull consumer needs it all the time.
    cpuAlwaysAllocated: !push,
    runtimeDependencies: [NEST_RUNTIME, ...(deploy.runtimeDependencies ?? [])],
    env: (environment) => ({
      ...(push
        ? pushWorkerEnv(name, environment)
        : { ...backendEnv(environment), TDA_INGRESS: 'pull' }),
      ...(llm && environment.llm === 'vertex-ai' ? VERTEX_AI_ENV : {}),
      ...(deploy.needs?.includes('exchange-account') === true &&
      environment.exchangeAccount !== undefined
        ? { TDA_ACCOUNT_CCXT_EXCHANGE: environment.exchangeAccount }
        : {}),
    }),
    secrets: (environment) => neededSecrets(deploy.needs, environment),
    roles: (environment) => [
      ...workerRoles(environment),
      ...(push
        ? []
        : [
            {
              resource: {
                type: 'subscription',
                name: stepReadySubscription(stepType, environment.pubsubPrefix),
              },
              role: 'roles/pubsub.subscriber',
              reason: `pulls ${stepType} step-ready messages`,
            } satisfies ResourceRole,
          ]),
      ...(llm ? [llmRole(environment)] : []),
      ...(deploy.needs?.includes('exchange-account') === true
        ? secretAccessors(exchangeAccountSecrets(environment))
        : []),
    ],
  };
}

/** Nest loads its HTTP platform without a static import; every service's image needs it. */
const NEST_RUNTIME = '@nestjs/platform-express';

const ORCHESTRATOR: ServiceDeployment = {
  project: 'orchestrator',
  name: 'tda-orchestrator',
  kind: 'Service',
  ingress: 'private-http',
  customAudience: 'tda-orchestrator',
  why:
    'The admin API needs a URL (IAM invoker only, no public access); it also consumes step ' +
    'events by streaming pull and runs the reconciler timer, hence CPU always allocated and ' +
    'one warm instance.',
  cpu: '1',
  memory: '512Mi',
  concurrency: 80,
  // Live event streams (SSE) stay open up to TDA_SSE_MAX_STREAM_SECONDS (900) and then end
  // cleanly; the request timeout must exceed it. Other requests take milliseconds.
  timeoutSeconds: 3600,
  minInstances: 1,
  maxInstances: 3,
  cpuAlwaysAllocated: true,
  runtimeDependencies: [NEST_RUNTIME],
  env: (environment) => ({
    ...backendEnv(environment),
    TDA_MAX_RUNNING_RUNS: String(environment.maxRunningRuns),
    // The console is built into the image beside main.js (tools/build: the console asset).
    TDA_CONSOLE_DIR: 'console',
    // Cloud Scheduler's jobs (reconcile, schedules tick) authenticate with their own ID token
    // (not TDA_API_TOKEN).
    TDA_ADMIN_OIDC_AUDIENCE: 'tda-orchestrator',
    TDA_ADMIN_OIDC_SERVICE_ACCOUNT: serviceAccountEmail(SCHEDULER_ACCOUNT_ID, environment.project),
  }),
  secrets: () => [{ env: 'TDA_API_TOKEN', secret: SECRETS.apiToken }],
  roles: (environment) => [
    firestoreUser,
    // Every step type's topic: a flow may contain step types no worker serves yet.
    ...STEP_TYPES.map((stepType): ResourceRole => ({
      resource: { type: 'topic', name: stepReadyTopic(stepType, environment.pubsubPrefix) },
      role: 'roles/pubsub.publisher',
      reason: 'dispatches step-ready messages',
    })),
    {
      resource: { type: 'project' },
      // Snapshots are project-level resources and seek needs consume on the subscription:
      // pubsub.editor is the narrowest predefined role covering /admin/replay and /admin/snapshots.
      role: 'roles/pubsub.editor',
      reason: 'consumes step events; creates snapshots and seeks subscriptions for replay',
    },
    {
      resource: { type: 'bucket', name: environment.artifactsBucket },
      role: 'roles/storage.objectViewer',
      reason: 'serves GET /runs/{id}/steps/{stepId}/artifact',
    },
    {
      resource: { type: 'secret', name: SECRETS.apiToken },
      role: 'roles/secretmanager.secretAccessor',
      reason: 'reads its admin API token',
    },
  ],
};

export const SERVICE_DEPLOYMENTS: readonly ServiceDeployment[] = [
  ORCHESTRATOR,
  ...STEP_TYPE_DESCRIPTORS.map(stepWorkerDeployment),
];

export function serviceDeployment(project: DeployableService): ServiceDeployment {
  const found = SERVICE_DEPLOYMENTS.find((s) => s.project === project);
  // SERVICE_DEPLOYMENTS covers DEPLOYABLE_SERVICES (checked by deployment-model.spec.ts).
  if (found === undefined) throw new Error(`no deployment for ${project}`);
  return found;
}

/**
 * The Secret Manager secrets some service of the environment references, in SECRETS order: the
 * ones `tda infra apply` creates (a secret nobody reads would only ask for a value nobody uses).
 */
export function referencedSecrets(environment: DeployEnvironment): string[] {
  const used = new Set(
    SERVICE_DEPLOYMENTS.flatMap((s) => s.secrets(environment).map((x) => x.secret)),
  );
  return Object.values(SECRETS).filter((secret) => used.has(secret));
}

/** Push workers: the step type each push subscription delivers, and the Service it targets. */
export const PUSH_TARGETS: readonly { stepType: StepType; service: DeployableService }[] =
  SERVICE_DEPLOYMENTS.flatMap((s) =>
    s.ingress === 'pubsub-push' && s.stepType !== undefined
      ? [{ stepType: s.stepType, service: s.project }]
      : [],
  );
