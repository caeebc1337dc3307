import type { PubSub } from '@google-cloud/pubsub';
import {
  applyTopology,
  buildTopology,
  stepReadySubscription,
  type PushDelivery,
  type Topology,
} from '@tda/messaging';
import {
  PUSH_INVOKER_ACCOUNT_ID,
  PUSH_TARGETS,
  SCHEDULER_ACCOUNT_ID,
  serviceAccountEmail,
  serviceDeployment,
  type DeployableService,
  type DeployEnvironment,
} from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import { serviceAccountMember, type IamBinding } from '../identity/iam-bindings';
import { pubsubServiceAgentEmail } from '../identity/project-number';
import { NOT_DEPLOYED_NOTE } from './cloud-run-services';
import { SCHEDULER_JOBS } from './cloud-scheduler';

/** Path of the push ingress on every push worker (libs/worker-kit). */
export const PUSH_PATH = '/pubsub/push';

/** Pub/Sub's limit for a push subscription's ack deadline (the time a push request may take). */
export const PUSH_ACK_DEADLINE_MAX_SECONDS = 600;

/**
 * A push subscription's ack deadline is how long Pub/Sub waits for the push request to answer.
 * It must outlast the Service's request timeout, or Pub/Sub redelivers a message whose request
 * is still running (a second, concurrent execution of the step); the margin covers the time to
 * the request's start (cold start, queueing).
 */
export function pushAckDeadlineSeconds(requestTimeoutSeconds: number): number {
  return Math.min(PUSH_ACK_DEADLINE_MAX_SECONDS, requestTimeoutSeconds + 30);
}

/** Cloud Run resource name of every push target and of the Scheduler's target (the orchestrator). */
export function runServicesToLookUp(): string[] {
  return [...PUSH_TARGETS.map((t) => serviceDeployment(t.service).name), 'tda-orchestrator'];
}

export interface GcpTopologyPlan {
  topology: Topology;
  /** One `skip` per push target not deployed yet. */
  skipped: InfraPlanItem[];
}

/**
 * The topology `tda infra apply` makes on GCP: the shared one (libs/messaging, what the emulator
 * gets) plus, for each push target, its subscription's ack deadline and — once its Service is
 * deployed — push to `<url>/pubsub/push` with an OIDC token of tda-pubsub-push whose audience is
 * the Service name (TDA_PUSH_AUDIENCE; the Service lists it in custom-audiences). A target not
 * deployed yet keeps its subscription as it is (created pull): messages wait there, up to the
 * retention of 7 days, for the apply after `skaffold run`.
 */
export function gcpTopology(
  environment: DeployEnvironment,
  serviceUrls: ReadonlyMap<string, string | null>,
): GcpTopologyPlan {
  const push: Record<string, PushDelivery> = {};
  const stepSubscriptionSettings: Record<string, { ackDeadlineSeconds: number }> = {};
  const skipped: InfraPlanItem[] = [];
  for (const target of PUSH_TARGETS) {
    const service = serviceDeployment(target.service);
    stepSubscriptionSettings[target.stepType] = {
      ackDeadlineSeconds: pushAckDeadlineSeconds(service.timeoutSeconds ?? 300),
    };
    const url = serviceUrls.get(service.name) ?? null;
    if (url === null) {
      push[target.stepType] = 'keep';
      skipped.push({
        action: 'skip',
        kind: 'push-config',
        name: stepReadySubscription(target.stepType, environment.pubsubPrefix),
        changes: [],
        note: `skip push config: ${NOT_DEPLOYED_NOTE}; messages wait in the subscription (7 days)`,
      });
      continue;
    }
    push[target.stepType] = {
      endpoint: `${url}${PUSH_PATH}`,
      // What the worker verifies (its TDA_PUSH_AUDIENCE, a custom audience of the Service).
      audience: service.env(environment)['TDA_PUSH_AUDIENCE'] ?? service.name,
      serviceAccountEmail: serviceAccountEmail(PUSH_INVOKER_ACCOUNT_ID, environment.project),
    };
  }
  return {
    topology: buildTopology({
      prefix: environment.pubsubPrefix,
      push,
      stepSubscriptionSettings,
    }),
    skipped,
  };
}

/** applyTopology with its plan in the InfraPlanItem shape. */
export async function applyPubSubTopology(
  pubsub: PubSub,
  topology: Topology,
  options: ApplyOptions,
): Promise<InfraPlanItem[]> {
  const plan = await applyTopology(pubsub, topology, { dryRun: options.dryRun });
  const pushOf = new Map(topology.subscriptions.map((s) => [s.name, s.push]));
  return plan.map((p) => {
    const push = p.kind === 'subscription' ? pushOf.get(p.name) : undefined;
    return {
      action: p.action,
      kind: p.kind,
      name: p.name,
      changes: p.changes,
      ...(push === undefined || push === 'keep'
        ? {}
        : { note: `push to ${push.endpoint} as ${push.serviceAccountEmail}` }),
    };
  });
}

/**
 * What the Pub/Sub service agent needs (pure): publish to the dead-letter topic and subscribe on
 * every subscription with a dead-letter policy (to forward a message and ack it at the source;
 * without these grants GCP silently never dead-letters), and create OIDC tokens for push (the
 * grant Google documents for push authentication, needed by projects whose agent predates
 * 2021-04-08 and harmless otherwise). The token creator grant is on the push identity
 * tda-pubsub-push only, not on the project: on the project the agent could mint tokens for every
 * service account, the deployer's and the services' included.
 */
export function pubsubServiceAgentBindings(
  topology: Topology,
  projectNumber: string,
  environment: DeployEnvironment,
): IamBinding[] {
  const member = serviceAccountMember(pubsubServiceAgentEmail(projectNumber));
  const deadLetterTopics = new Set<string>();
  const bindings: IamBinding[] = [];
  for (const subscription of topology.subscriptions) {
    const deadLetter = subscription.settings.deadLetter;
    if (deadLetter === undefined) continue;
    deadLetterTopics.add(deadLetter.topic);
    bindings.push({
      resource: { type: 'subscription', name: subscription.name },
      role: 'roles/pubsub.subscriber',
      member,
      reason: 'Pub/Sub service agent acks what it moves to the dead-letter topic',
    });
  }
  for (const topic of deadLetterTopics) {
    bindings.unshift({
      resource: { type: 'topic', name: topic },
      role: 'roles/pubsub.publisher',
      member,
      reason: 'Pub/Sub service agent forwards undeliverable messages to the dead-letter topic',
    });
  }
  if (topology.subscriptions.some((s) => s.push !== undefined)) {
    bindings.push({
      resource: {
        type: 'service-account',
        email: serviceAccountEmail(PUSH_INVOKER_ACCOUNT_ID, environment.project),
      },
      role: 'roles/iam.serviceAccountTokenCreator',
      member,
      reason: `Pub/Sub service agent signs the push OIDC tokens of ${PUSH_INVOKER_ACCOUNT_ID}`,
    });
  }
  return bindings;
}

/** `POST /admin/reconcile, POST /admin/schedules/tick`: what the Scheduler jobs call on `target`. */
function schedulerCallsOf(target: DeployableService): string {
  return SCHEDULER_JOBS.filter((j) => j.target === target)
    .map((j) => `${j.httpMethod} ${j.path.split('?')[0] ?? j.path}`)
    .join(', ');
}

export interface InvokerPlan {
  bindings: IamBinding[];
  /** One `skip` per Service not deployed yet. */
  skipped: InfraPlanItem[];
}

/**
 * roles/run.invoker on each push Service for tda-pubsub-push and on the orchestrator for
 * tda-scheduler (Cloud Run checks the caller's token against it); a Service not deployed yet has
 * no IAM policy to add to, so its grant waits (skip).
 */
export function runInvokerBindings(
  environment: DeployEnvironment,
  serviceUrls: ReadonlyMap<string, string | null>,
): InvokerPlan {
  const wanted: { service: string; account: string; reason: string }[] = [
    ...PUSH_TARGETS.map((t) => ({
      service: serviceDeployment(t.service).name,
      account: PUSH_INVOKER_ACCOUNT_ID,
      reason: `Pub/Sub push delivers ${t.stepType} steps`,
    })),
    {
      service: serviceDeployment('orchestrator').name,
      account: SCHEDULER_ACCOUNT_ID,
      reason: `Cloud Scheduler calls ${schedulerCallsOf('orchestrator')}`,
    },
  ];
  const plan: InvokerPlan = { bindings: [], skipped: [] };
  for (const { service, account, reason } of wanted) {
    const member = serviceAccountMember(serviceAccountEmail(account, environment.project));
    if ((serviceUrls.get(service) ?? null) === null) {
      plan.skipped.push({
        action: 'skip',
        kind: 'iam-binding',
        name: `Cloud Run service ${service}: roles/run.invoker → ${member}`,
        changes: [],
        note: NOT_DEPLOYED_NOTE,
      });
      continue;
    }
    plan.bindings.push({
      resource: { type: 'run-service', name: service },
      role: 'roles/run.invoker',
      member,
      reason,
    });
  }
  return plan;
}
