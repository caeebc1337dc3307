import { STEP_TYPES } from '@tda/contracts';
import { STEP_TYPE_DESCRIPTORS } from '@tda/step-types';
import { buildTopology, deadLetterTopic, stepReadySubscription } from '@tda/messaging';
import { describe, expect, it } from 'vitest';
import { serviceDeployment } from '../../deployment-model';
import {
  gcpTopology,
  pushAckDeadlineSeconds,
  pubsubServiceAgentBindings,
  runInvokerBindings,
  runServicesToLookUp,
} from './pubsub-platform';
import { testEnvironment } from '../../testing';

const env = testEnvironment('dev');
const OHLCV_URL = 'https://tda-worker-ohlcv-export-abc-ew.a.run.app';
/** The push Services, from the step type descriptors (a new step type needs no edit here). */
const PUSH = STEP_TYPE_DESCRIPTORS.filter((d) => d.deploy.kind === 'Service');
const PUSH_STEP_TYPES = PUSH.map((d) => d.stepType);
const PUSH_SERVICES = PUSH.map((d) => `tda-${d.service}`);
const deployed = new Map<string, string | null>([
  ...PUSH_SERVICES.map((name): [string, string | null] => [
    name,
    name === 'tda-worker-ohlcv-export' ? OHLCV_URL : null,
  ]),
  ['tda-orchestrator', null],
]);

describe('the GCP topology', () => {
  it('pushes to deployed push targets with an OIDC token of tda-pubsub-push, audience = Service name', () => {
    const { topology, skipped } = gcpTopology(env, deployed);
    const byName = new Map(topology.subscriptions.map((s) => [s.name, s]));
    expect(byName.get(stepReadySubscription('OHLCV_EXPORT'))?.push).toEqual({
      endpoint: `${OHLCV_URL}/pubsub/push`,
      audience: 'tda-worker-ohlcv-export',
      serviceAccountEmail: 'tda-pubsub-push@acme-tda-dev.iam.gserviceaccount.com',
    });
    // not deployed: keep (created pull) and say so
    expect(byName.get(stepReadySubscription('CHART_EXPORT'))?.push).toBe('keep');
    expect(skipped).toEqual(
      PUSH_STEP_TYPES.filter((t) => t !== 'OHLCV_EXPORT').map((stepType) => ({
        action: 'skip',
        kind: 'push-config',
        name: stepReadySubscription(stepType),
        changes: [],
        note: 'skip push config: service not deployed (run infra apply again after skaffold run); messages wait in the subscription (7 days)',
      })),
    );
    // LLM_REPORT (Worker Pool) and the step events pull
    expect(byName.get(stepReadySubscription('LLM_REPORT'))?.push).toBeUndefined();
    expect(byName.get('tda-step-events-sub')?.push).toBeUndefined();
  });

  it('gives push subscriptions an ack deadline past the request timeout, within the 600 s limit', () => {
    const { topology } = gcpTopology(env, deployed);
    for (const stepType of ['OHLCV_EXPORT', 'CHART_EXPORT']) {
      const sub = topology.subscriptions.find((s) => s.name === stepReadySubscription(stepType));
      const timeout = serviceDeployment(
        stepType === 'OHLCV_EXPORT' ? 'worker-ohlcv-export' : 'worker-chart-export',
      ).timeoutSeconds;
      expect(sub?.settings.ackDeadlineSeconds).toBe(330);
      expect(sub?.settings.ackDeadlineSeconds).toBeGreaterThan(timeout ?? 0);
    }
    expect(pushAckDeadlineSeconds(590)).toBe(600);
    // same resources as the emulator's topology: only settings differ
    expect(topology.subscriptions.map((s) => s.name)).toEqual(
      buildTopology({ prefix: 'tda' }).subscriptions.map((s) => s.name),
    );
  });

  it('looks up the push targets and the orchestrator', () => {
    expect(runServicesToLookUp()).toEqual([...PUSH_SERVICES, 'tda-orchestrator']);
  });
});

describe('Pub/Sub service agent bindings', () => {
  it('publisher on the dead-letter topic, subscriber on every dead-lettered subscription, token creator for push', () => {
    const { topology } = gcpTopology(env, deployed);
    const bindings = pubsubServiceAgentBindings(topology, '123456789012', env);
    const member = 'serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com';
    expect(bindings.every((b) => b.member === member)).toBe(true);
    expect(bindings[0]).toMatchObject({
      resource: { type: 'topic', name: deadLetterTopic('tda') },
      role: 'roles/pubsub.publisher',
    });
    const subscribers = bindings.filter((b) => b.role === 'roles/pubsub.subscriber');
    expect(subscribers.map((b) => b.resource)).toEqual(
      [...STEP_TYPES.map((t) => stepReadySubscription(t)), 'tda-step-events-sub'].map((name) => ({
        type: 'subscription',
        name,
      })),
    );
    // the dead-letter subscription has no dead-letter policy of its own
    expect(
      subscribers.some(
        (b) => b.resource.type === 'subscription' && b.resource.name === 'tda-dead-letter-sub',
      ),
    ).toBe(false);
    // token creator on the push identity only: on the project the agent could mint tokens for
    // every service account of the project
    const tokenCreators = bindings.filter((b) => b.role === 'roles/iam.serviceAccountTokenCreator');
    expect(tokenCreators).toEqual([
      {
        resource: {
          type: 'service-account',
          email: 'tda-pubsub-push@acme-tda-dev.iam.gserviceaccount.com',
        },
        role: 'roles/iam.serviceAccountTokenCreator',
        member,
        reason: 'Pub/Sub service agent signs the push OIDC tokens of tda-pubsub-push',
      },
    ]);
    expect(bindings.some((b) => b.resource.type === 'project')).toBe(false);
    // no push anywhere: no token creator
    expect(
      pubsubServiceAgentBindings(buildTopology(), '1', env).some(
        (b) => b.role === 'roles/iam.serviceAccountTokenCreator',
      ),
    ).toBe(false);
  });
});

describe('Cloud Run invoker bindings', () => {
  it('grants run.invoker on deployed Services and skips the others', () => {
    const { bindings, skipped } = runInvokerBindings(env, deployed);
    expect(bindings).toEqual([
      {
        resource: { type: 'run-service', name: 'tda-worker-ohlcv-export' },
        role: 'roles/run.invoker',
        member: 'serviceAccount:tda-pubsub-push@acme-tda-dev.iam.gserviceaccount.com',
        reason: 'Pub/Sub push delivers OHLCV_EXPORT steps',
      },
    ]);
    expect(skipped.map((s) => [s.action, s.name, s.note])).toEqual([
      ...PUSH_SERVICES.filter((name) => name !== 'tda-worker-ohlcv-export').map((name) => [
        'skip',
        `Cloud Run service ${name}: roles/run.invoker → serviceAccount:tda-pubsub-push@acme-tda-dev.iam.gserviceaccount.com`,
        'service not deployed (run infra apply again after skaffold run)',
      ]),
      [
        'skip',
        'Cloud Run service tda-orchestrator: roles/run.invoker → serviceAccount:tda-scheduler@acme-tda-dev.iam.gserviceaccount.com',
        'service not deployed (run infra apply again after skaffold run)',
      ],
    ]);
  });
});
