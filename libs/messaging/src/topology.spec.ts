import { STEP_TYPES } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { TopologyError } from './messaging.errors';
import {
  DEFAULT_SUBSCRIPTION_SETTINGS,
  DEAD_LETTER_SUBSCRIPTION,
  DEAD_LETTER_TOPIC,
  STEP_EVENTS_SUBSCRIPTION,
  STEP_EVENTS_TOPIC,
  buildTopology,
  stepReadySubscription,
  stepReadyTopic,
  validateTopology,
} from './topology';

describe('topology names', () => {
  it('names step-ready topics per step type in kebab case', () => {
    expect(stepReadyTopic('LLM_REPORT')).toBe('tda-step-ready-llm-report');
    expect(stepReadySubscription('INDICATORS_ON_DEMAND')).toBe(
      'tda-step-ready-indicators-on-demand-sub',
    );
    expect(stepReadyTopic('OHLCV_EXPORT', 'dev')).toBe('dev-step-ready-ohlcv-export');
    expect(STEP_EVENTS_TOPIC).toBe('tda-step-events');
    expect(STEP_EVENTS_SUBSCRIPTION).toBe('tda-step-events-sub');
    expect(DEAD_LETTER_TOPIC).toBe('tda-dead-letter');
    expect(DEAD_LETTER_SUBSCRIPTION).toBe('tda-dead-letter-sub');
  });
});

describe('buildTopology', () => {
  it('has one topic and subscription per step type, plus step-events, dead-letter and signals', () => {
    const topology = buildTopology({ prefix: 'tda', stepTypes: STEP_TYPES });
    expect(topology.topics.map((t) => t.name).sort()).toEqual(
      [
        ...STEP_TYPES.map((s) => stepReadyTopic(s)),
        'tda-step-events',
        'tda-dead-letter',
        'tda-signals',
      ].sort(),
    );
    expect(topology.subscriptions).toHaveLength(STEP_TYPES.length + 3);
    expect(
      topology.subscriptions.find((s) => s.name === 'tda-signals-sub')?.settings.deadLetter,
    ).toBeUndefined();
    for (const sub of topology.subscriptions) expect(sub.name).toBe(`${sub.topic}-sub`);
  });

  it('dead-letters every work subscription and retains acked messages everywhere', () => {
    const topology = buildTopology({ stepTypes: ['LLM_REPORT'], maxDeliveryAttempts: 7 });
    const byName = new Map(topology.subscriptions.map((s) => [s.name, s.settings]));
    expect(byName.get('tda-step-ready-llm-report-sub')).toEqual({
      ackDeadlineSeconds: 60,
      minimumBackoffSeconds: 10,
      maximumBackoffSeconds: 600,
      retainAckedMessages: true,
      messageRetentionSeconds: 604800,
      deadLetter: { topic: 'tda-dead-letter', maxDeliveryAttempts: 7 },
    });
    expect(byName.get('tda-step-events-sub')?.deadLetter?.topic).toBe('tda-dead-letter');
    expect(byName.get('tda-dead-letter-sub')?.deadLetter).toBeUndefined();
    for (const settings of byName.values()) expect(settings.retainAckedMessages).toBe(true);
  });

  it('applies subscription overrides', () => {
    const topology = buildTopology({
      stepTypes: ['LLM_REPORT'],
      subscriptionDefaults: { ackDeadlineSeconds: 10, minimumBackoffSeconds: 1 },
    });
    for (const { settings } of topology.subscriptions) {
      expect(settings).toMatchObject({ ackDeadlineSeconds: 10, minimumBackoffSeconds: 1 });
    }
  });

  it('rejects what GCP would reject', () => {
    expect(() => buildTopology({ subscriptionDefaults: { ackDeadlineSeconds: 5 } })).toThrow(
      TopologyError,
    );
    expect(() => buildTopology({ maxDeliveryAttempts: 3 })).toThrow(/maxDeliveryAttempts/);
    expect(() =>
      buildTopology({
        subscriptionDefaults: { minimumBackoffSeconds: 60, maximumBackoffSeconds: 30 },
      }),
    ).toThrow(/minimumBackoffSeconds/);
    expect(() => buildTopology({ prefix: 'goog' })).toThrow(/invalid Pub\/Sub resource name/);
    expect(() => buildTopology({ prefix: '1x' })).toThrow(/invalid/);
    expect(() =>
      validateTopology({
        prefix: 'x',
        topics: [{ name: 'topic-a' }],
        subscriptions: [
          {
            name: 'sub-a',
            topic: 'topic-b',
            settings: { ...DEFAULT_SUBSCRIPTION_SETTINGS },
          },
        ],
      }),
    ).toThrow(/unknown topic topic-b/);
  });
});

describe('buildTopology push delivery', () => {
  const push = {
    endpoint: 'https://tda-worker-ohlcv-export-abc-ew.a.run.app/pubsub/push',
    audience: 'tda-worker-ohlcv-export',
    serviceAccountEmail: 'tda-pubsub-push@my-project.iam.gserviceaccount.com',
  };

  it('puts the push endpoint and per-step settings on that step type only', () => {
    const topology = buildTopology({
      stepTypes: ['OHLCV_EXPORT', 'CHART_EXPORT', 'LLM_REPORT'],
      push: { OHLCV_EXPORT: push, CHART_EXPORT: 'keep' },
      stepSubscriptionSettings: { OHLCV_EXPORT: { ackDeadlineSeconds: 330 } },
    });
    const byName = new Map(topology.subscriptions.map((s) => [s.name, s]));
    const ohlcv = byName.get(stepReadySubscription('OHLCV_EXPORT'));
    expect(ohlcv?.push).toEqual(push);
    expect(ohlcv?.settings.ackDeadlineSeconds).toBe(330);
    expect(ohlcv?.settings.deadLetter?.topic).toBe('tda-dead-letter');
    expect(byName.get(stepReadySubscription('CHART_EXPORT'))?.push).toBe('keep');
    expect(byName.get(stepReadySubscription('CHART_EXPORT'))?.settings.ackDeadlineSeconds).toBe(60);
    expect(byName.get(stepReadySubscription('LLM_REPORT'))?.push).toBeUndefined();
    expect(byName.get('tda-step-events-sub')?.push).toBeUndefined();
    // same resources, same order as without push
    expect(topology.subscriptions.map((s) => s.name)).toEqual(
      buildTopology({
        stepTypes: ['OHLCV_EXPORT', 'CHART_EXPORT', 'LLM_REPORT'],
      }).subscriptions.map((s) => s.name),
    );
  });

  it('rejects push for unknown step types, bad endpoints and accounts, and push ack deadlines over 600 s', () => {
    expect(() =>
      buildTopology({ stepTypes: ['LLM_REPORT'], push: { OHLCV_EXPORT: push } }),
    ).toThrow(/push: not a step type of this topology: OHLCV_EXPORT/);
    expect(() =>
      buildTopology({
        stepTypes: ['LLM_REPORT'],
        stepSubscriptionSettings: { CHART_EXPORT: { ackDeadlineSeconds: 30 } },
      }),
    ).toThrow(/stepSubscriptionSettings/);
    expect(() =>
      buildTopology({
        stepTypes: ['OHLCV_EXPORT'],
        push: { OHLCV_EXPORT: { ...push, endpoint: 'not a url' } },
      }),
    ).toThrow(/push endpoint is not a URL/);
    expect(() =>
      buildTopology({
        stepTypes: ['OHLCV_EXPORT'],
        push: { OHLCV_EXPORT: { ...push, endpoint: 'ftp://x.example/push' } },
      }),
    ).toThrow(/must be http\(s\)/);
    expect(() =>
      buildTopology({
        stepTypes: ['OHLCV_EXPORT'],
        push: { OHLCV_EXPORT: { ...push, serviceAccountEmail: 'tda-pubsub-push' } },
      }),
    ).toThrow(/not an email/);
    expect(() =>
      buildTopology({
        stepTypes: ['OHLCV_EXPORT'],
        push: { OHLCV_EXPORT: { ...push, audience: ' ' } },
      }),
    ).toThrow(/audience is empty/);
    expect(() =>
      buildTopology({
        stepTypes: ['OHLCV_EXPORT'],
        push: { OHLCV_EXPORT: push },
        stepSubscriptionSettings: { OHLCV_EXPORT: { ackDeadlineSeconds: 780 } },
      }),
    ).toThrow(/ackDeadlineSeconds must be an integer in 10\.\.600/);
  });
});
