import {
  PUSH_INVOKER_ACCOUNT_ID,
  serviceAccountEmail,
  type DeployEnvironment,
  type ServiceDeployment,
} from '../deployment-model';

/**
 * One Cloud Run manifest per deployable service and skaffold profile, derived from the
 * deployment model only (nothing is typed by hand): a Cloud Run Service (Knative serving v1
 * YAML) for request-driven services, a Worker Pool (run.googleapis.com/v1) for the pull worker.
 * skaffold's `cloudrun` deployer reads both (manifests.rawYaml) and swaps the image name for the
 * built image reference.
 */

/** Every TDA container listens here (the services' PORT default); Cloud Run reserves PORT itself. */
export const CONTAINER_PORT = 8080;
/** Answered with 200 by every service once it is up (startup and liveness probes). */
export const HEALTH_PATH = '/healthz';

export const KNATIVE_SERVICE = { apiVersion: 'serving.knative.dev/v1', kind: 'Service' } as const;
export const RUN_WORKER_POOL = { apiVersion: 'run.googleapis.com/v1', kind: 'WorkerPool' } as const;

/**
 * Cloud Run accepts only Google Cloud labels (keys `[a-z][a-z0-9_-]{0,62}`, no `/` or `.`), so
 * Kubernetes-style keys such as `app.kubernetes.io/part-of` would be rejected at deploy.
 */
export const PART_OF_LABEL = 'part-of';
export const SERVICE_LABEL = 'tda-service';

export const ANNOTATION = {
  /** The model's reason for the kind and ingress of this service. */
  why: 'tda.dev/why',
  /** Who may call it, in words (the IAM bindings themselves are made by `tda infra apply`). */
  access: 'tda.dev/access',
  ingress: 'run.googleapis.com/ingress',
  customAudiences: 'run.googleapis.com/custom-audiences',
  launchStage: 'run.googleapis.com/launch-stage',
  scalingMode: 'run.googleapis.com/scalingMode',
  manualInstanceCount: 'run.googleapis.com/manualInstanceCount',
  minScale: 'autoscaling.knative.dev/minScale',
  maxScale: 'autoscaling.knative.dev/maxScale',
  cpuThrottling: 'run.googleapis.com/cpu-throttling',
  startupCpuBoost: 'run.googleapis.com/startup-cpu-boost',
  executionEnvironment: 'run.googleapis.com/execution-environment',
} as const;

/** Cloud Run secret reference (v1 YAML): the Secret Manager secret id and its version. */
export interface SecretKeyRef {
  name: string;
  key: string;
}

export type ContainerEnv =
  { name: string; value: string } | { name: string; valueFrom: { secretKeyRef: SecretKeyRef } };

interface HttpProbe {
  httpGet: { path: string; port: number };
  timeoutSeconds: number;
  periodSeconds: number;
  failureThreshold: number;
}

export interface ManifestContainer {
  image: string;
  ports?: { name: string; containerPort: number }[];
  env: ContainerEnv[];
  resources: { limits: { cpu: string; memory: string } };
  startupProbe: HttpProbe;
  livenessProbe: HttpProbe;
}

export interface CloudRunManifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    /** The GCP project (skaffold's deploy.cloudrun.projectid sets the same value). */
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  spec: {
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: {
        containerConcurrency?: number;
        timeoutSeconds?: number;
        serviceAccountName: string;
        containers: ManifestContainer[];
      };
    };
  };
}

/** The Artifact Registry image is resolved by skaffold (`--default-repo`): the bare name here. */
export function imageName(deployment: Pick<ServiceDeployment, 'name'>): string {
  return deployment.name;
}

/** Who may invoke it, stated in the manifest so a reader does not have to open the IAM code. */
export function accessNote(deployment: ServiceDeployment, environment: DeployEnvironment): string {
  switch (deployment.ingress) {
    case 'private-http':
      return (
        'IAM invoker only: no allUsers binding. Callers (the tda CLI, Cloud Scheduler) send a ' +
        'Google identity token and need roles/run.invoker on this service; Cloud Scheduler uses ' +
        `the audience ${deployment.customAudience ?? deployment.name}.`
      );
    case 'pubsub-push':
      return (
        `IAM invoker only: no allUsers binding. Pub/Sub pushes as ` +
        `${serviceAccountEmail(PUSH_INVOKER_ACCOUNT_ID, environment.project)} (roles/run.invoker ` +
        `from tda infra apply) with the OIDC audience ${deployment.name}, accepted through ` +
        'run.googleapis.com/custom-audiences.'
      );
    case 'pubsub-pull':
      return 'No URL: a Worker Pool receives no requests; it pulls its Pub/Sub subscription.';
  }
}

function containerEnv(
  deployment: ServiceDeployment,
  environment: DeployEnvironment,
): ContainerEnv[] {
  const plain = Object.entries(deployment.env(environment)).map(([name, value]) => ({
    name,
    value,
  }));
  // Secrets only by reference: the value never appears in a manifest, a revision or a log.
  const secrets = deployment.secrets(environment).map((s) => ({
    name: s.env,
    valueFrom: { secretKeyRef: { name: s.secret, key: 'latest' } },
  }));
  return [...plain, ...secrets];
}

function probes(): Pick<ManifestContainer, 'startupProbe' | 'livenessProbe'> {
  const httpGet = { path: HEALTH_PATH, port: CONTAINER_PORT };
  return {
    // Up to 120 s to boot (Cloud Run caps a startup probe at 240 s).
    startupProbe: { httpGet, timeoutSeconds: 3, periodSeconds: 5, failureThreshold: 24 },
    // Restarts a wedged instance only: /healthz is answered from the event loop, so three
    // missed checks 30 s apart mean the process no longer serves at all.
    livenessProbe: { httpGet, timeoutSeconds: 5, periodSeconds: 30, failureThreshold: 3 },
  };
}

function labels(deployment: ServiceDeployment): Record<string, string> {
  return { [PART_OF_LABEL]: 'tda', [SERVICE_LABEL]: deployment.project };
}

function serviceManifest(
  deployment: ServiceDeployment,
  environment: DeployEnvironment,
): CloudRunManifest {
  const annotations: Record<string, string> = {
    // The CLI reaches the orchestrator from outside Google Cloud; access is decided by IAM.
    [ANNOTATION.ingress]: 'all',
    [ANNOTATION.why]: deployment.why,
    [ANNOTATION.access]: accessNote(deployment, environment),
  };
  if (deployment.customAudience !== undefined) {
    // Push and Scheduler OIDC tokens carry this audience (not the run.app URL, unknown before the
    // first deploy); Cloud Run's IAM check accepts it only when listed here.
    annotations[ANNOTATION.customAudiences] = JSON.stringify([deployment.customAudience]);
  }
  return {
    ...KNATIVE_SERVICE,
    metadata: {
      name: deployment.name,
      namespace: environment.project,
      labels: labels(deployment),
      annotations,
    },
    spec: {
      template: {
        metadata: {
          labels: labels(deployment),
          annotations: {
            [ANNOTATION.minScale]: String(deployment.minInstances),
            [ANNOTATION.maxScale]: String(deployment.maxInstances),
            // false = CPU outside requests (streaming pull, timers), billed per instance.
            [ANNOTATION.cpuThrottling]: String(!deployment.cpuAlwaysAllocated),
            [ANNOTATION.startupCpuBoost]: 'true',
            [ANNOTATION.executionEnvironment]: 'gen2',
          },
        },
        spec: {
          ...(deployment.concurrency !== undefined
            ? { containerConcurrency: deployment.concurrency }
            : {}),
          ...(deployment.timeoutSeconds !== undefined
            ? { timeoutSeconds: deployment.timeoutSeconds }
            : {}),
          serviceAccountName: serviceAccountEmail(deployment.name, environment.project),
          containers: [
            {
              image: imageName(deployment),
              ports: [{ name: 'http1', containerPort: CONTAINER_PORT }],
              env: containerEnv(deployment, environment),
              resources: { limits: { cpu: deployment.cpu, memory: deployment.memory } },
              ...probes(),
            },
          ],
        },
      },
    },
  };
}

function workerPoolManifest(
  deployment: ServiceDeployment,
  environment: DeployEnvironment,
): CloudRunManifest {
  return {
    ...RUN_WORKER_POOL,
    metadata: {
      name: deployment.name,
      namespace: environment.project,
      labels: labels(deployment),
      annotations: {
        // Harmless once worker pools are GA; required by Cloud Run API versions where they are not.
        [ANNOTATION.launchStage]: 'BETA',
        // A worker pool does not autoscale on requests: the model's min is the instance count.
        // The count applies only in manual mode; without scalingMode gcloud reads the pool as
        // automatically scaled and ignores it.
        [ANNOTATION.scalingMode]: 'manual',
        [ANNOTATION.manualInstanceCount]: String(deployment.minInstances),
        [ANNOTATION.why]: deployment.why,
        [ANNOTATION.access]: accessNote(deployment, environment),
      },
    },
    spec: {
      template: {
        // CPU is always allocated in a worker pool: no cpu-throttling or request settings.
        metadata: { labels: labels(deployment) },
        spec: {
          serviceAccountName: serviceAccountEmail(deployment.name, environment.project),
          containers: [
            {
              // No ports: a worker pool has no ingress; the probes name the health port.
              image: imageName(deployment),
              env: containerEnv(deployment, environment),
              resources: { limits: { cpu: deployment.cpu, memory: deployment.memory } },
              ...probes(),
            },
          ],
        },
      },
    },
  };
}

export function cloudRunManifest(
  deployment: ServiceDeployment,
  environment: DeployEnvironment,
): CloudRunManifest {
  return deployment.kind === 'Service'
    ? serviceManifest(deployment, environment)
    : workerPoolManifest(deployment, environment);
}
