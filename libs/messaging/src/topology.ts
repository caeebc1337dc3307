import type { PubSub } from '@google-cloud/pubsub';
import { STEP_TYPES, type StepType } from '@tda/contracts';
import { grpcCode, GRPC_ALREADY_EXISTS, GRPC_NOT_FOUND } from './grpc-status';
import { TopologyError } from './messaging.errors';

/**
 * Topics and subscriptions as code (DESIGN.md §4): one step-ready topic per stepType, one
 * step-events topic, one dead-letter topic, each with one subscription. The same description
 * is applied to the emulator (tests, local), to GCP (deploy/) and to the in-memory broker.
 */

export const DEFAULT_PREFIX = 'tda';

/** `LLM_REPORT` -> `llm-report`. */
export function stepTypeKebab(stepType: StepType | string): string {
  return stepType.toLowerCase().replace(/_/g, '-');
}

export function stepReadyTopic(stepType: StepType | string, prefix = DEFAULT_PREFIX): string {
  return `${prefix}-step-ready-${stepTypeKebab(stepType)}`;
}

export function subscriptionFor(topic: string): string {
  return `${topic}-sub`;
}

export function stepReadySubscription(
  stepType: StepType | string,
  prefix = DEFAULT_PREFIX,
): string {
  return subscriptionFor(stepReadyTopic(stepType, prefix));
}

export function stepEventsTopic(prefix = DEFAULT_PREFIX): string {
  return `${prefix}-step-events`;
}

export function stepEventsSubscription(prefix = DEFAULT_PREFIX): string {
  return subscriptionFor(stepEventsTopic(prefix));
}

export function deadLetterTopic(prefix = DEFAULT_PREFIX): string {
  return `${prefix}-dead-letter`;
}

export function deadLetterSubscription(prefix = DEFAULT_PREFIX): string {
  return subscriptionFor(deadLetterTopic(prefix));
}

/** Flow 7: orchestrator → other systems, one message per emitted signal (DESIGN §4). */
export function signalsTopic(prefix = DEFAULT_PREFIX): string {
  return `${prefix}-signals`;
}

/** A subscription on the signals topic for consumers that have none of their own (and tests). */
export function signalsSubscription(prefix = DEFAULT_PREFIX): string {
  return subscriptionFor(signalsTopic(prefix));
}

export const STEP_EVENTS_TOPIC = stepEventsTopic();
export const STEP_EVENTS_SUBSCRIPTION = stepEventsSubscription();
export const DEAD_LETTER_TOPIC = deadLetterTopic();
export const DEAD_LETTER_SUBSCRIPTION = deadLetterSubscription();

/** The `messageType` attribute values the transport routes on. */
export const MESSAGE_TYPES = {
  stepReady: 'step_ready',
  stepEvent: 'step_event',
} as const;
export type MessageType = (typeof MESSAGE_TYPES)[keyof typeof MESSAGE_TYPES];

export interface SubscriptionSettings {
  /** 10..600 */
  ackDeadlineSeconds: number;
  /** Redelivery backoff after a nack or an expired deadline, 0..600 each. */
  minimumBackoffSeconds: number;
  maximumBackoffSeconds: number;
  /** Omitted on the dead-letter subscription itself. */
  deadLetter?: { topic: string; maxDeliveryAttempts: number };
  /** Needed for seek-to-time replay of acknowledged messages. */
  retainAckedMessages: boolean;
  /** 600..604800 (10 minutes .. 7 days). */
  messageRetentionSeconds: number;
}

export interface TopicSpec {
  name: string;
}

/**
 * Pub/Sub push delivery with an OIDC token (a Cloud Run Service fed by push). Pub/Sub signs a
 * Google ID token as `serviceAccountEmail` with `audience`; the receiver verifies both.
 */
export interface PushEndpoint {
  /** e.g. `https://tda-worker-ohlcv-export-….run.app/pubsub/push` (http only on the emulator). */
  endpoint: string;
  audience: string;
  serviceAccountEmail: string;
}

/**
 * `'keep'`: the push target is not reachable yet (e.g. its Cloud Run Service is not deployed):
 * leave the subscription's delivery as it is — a new subscription is created as pull, where
 * messages wait (up to the retention) until a later apply turns push on.
 */
export type PushDelivery = PushEndpoint | 'keep';

export interface SubscriptionSpec {
  name: string;
  topic: string;
  /** Subscriptions never expire for inactivity (GCP's default is 31 days, fatal for a rarely used step type). */
  settings: SubscriptionSettings;
  /** Absent: pull (a push config found on the subscription is removed). */
  push?: PushDelivery;
}

export interface Topology {
  prefix: string;
  topics: TopicSpec[];
  subscriptions: SubscriptionSpec[];
}

export interface BuildTopologyOptions {
  prefix?: string;
  stepTypes?: readonly (StepType | string)[];
  /** Overrides for every subscription except where noted. */
  subscriptionDefaults?: Partial<Omit<SubscriptionSettings, 'deadLetter'>>;
  /** Deliveries before GCP moves a message to the dead-letter topic (5..100). */
  maxDeliveryAttempts?: number;
  /**
   * Per step type: overrides of its step-ready subscription (on top of subscriptionDefaults),
   * e.g. the ack deadline of a push subscription, which is how long Pub/Sub waits for the push
   * request to answer.
   */
  stepSubscriptionSettings?: Readonly<
    Record<string, Partial<Omit<SubscriptionSettings, 'deadLetter'>>>
  >;
  /** Per step type: push delivery of its step-ready subscription (absent step types pull). */
  push?: Readonly<Record<string, PushDelivery>>;
}

export const DEFAULT_SUBSCRIPTION_SETTINGS: Readonly<Omit<SubscriptionSettings, 'deadLetter'>> = {
  ackDeadlineSeconds: 60,
  minimumBackoffSeconds: 10,
  maximumBackoffSeconds: 600,
  retainAckedMessages: true,
  messageRetentionSeconds: 7 * 24 * 3600,
};
export const DEFAULT_MAX_DELIVERY_ATTEMPTS = 10;

const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/;

export function buildTopology(options: BuildTopologyOptions = {}): Topology {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const stepTypes = options.stepTypes ?? STEP_TYPES;
  const base: Omit<SubscriptionSettings, 'deadLetter'> = {
    ...DEFAULT_SUBSCRIPTION_SETTINGS,
    ...options.subscriptionDefaults,
  };
  const deadLetter = {
    topic: deadLetterTopic(prefix),
    maxDeliveryAttempts: options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS,
  };
  const uniqueStepTypes = [...new Set(stepTypes)];
  for (const [option, keys] of [
    ['push', Object.keys(options.push ?? {})],
    ['stepSubscriptionSettings', Object.keys(options.stepSubscriptionSettings ?? {})],
  ] as const) {
    const unknown = keys.filter((k) => !uniqueStepTypes.includes(k));
    if (unknown.length > 0) {
      throw new TopologyError(`${option}: not a step type of this topology: ${unknown.join(', ')}`);
    }
  }
  const stepSubscriptions: SubscriptionSpec[] = uniqueStepTypes.map((stepType) => {
    const topic = stepReadyTopic(stepType, prefix);
    const push = options.push?.[stepType];
    return {
      name: subscriptionFor(topic),
      topic,
      settings: { ...base, ...options.stepSubscriptionSettings?.[stepType], deadLetter },
      ...(push === undefined ? {} : { push }),
    };
  });
  const eventsTopic = stepEventsTopic(prefix);
  const workTopics = [...stepSubscriptions.map((s) => s.topic), eventsTopic];
  const topology: Topology = {
    prefix,
    topics: [...workTopics, deadLetter.topic, signalsTopic(prefix)].map((name) => ({ name })),
    subscriptions: [
      ...stepSubscriptions,
      { name: subscriptionFor(eventsTopic), topic: eventsTopic, settings: { ...base, deadLetter } },
      // The dead-letter subscription keeps what landed there for inspection; it has no dead
      // letter of its own.
      { name: deadLetterSubscription(prefix), topic: deadLetter.topic, settings: { ...base } },
      // Signals are for other systems: no dead letter here (a consumer sets its own policy).
      { name: signalsSubscription(prefix), topic: signalsTopic(prefix), settings: { ...base } },
    ],
  };
  validateTopology(topology);
  return topology;
}

function checkRange(what: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TopologyError(`${what} must be an integer in ${min}..${max}, got ${value}`);
  }
}

/** Enforces the limits GCP enforces, so the emulator and memory never accept what GCP rejects. */
export function validateTopology(topology: Topology): void {
  const topicNames = new Set(topology.topics.map((t) => t.name));
  for (const name of [...topicNames, ...topology.subscriptions.map((s) => s.name)]) {
    if (!NAME_PATTERN.test(name) || name.startsWith('goog')) {
      throw new TopologyError(`invalid Pub/Sub resource name: ${name}`);
    }
  }
  for (const { name, topic, settings, push } of topology.subscriptions) {
    if (!topicNames.has(topic)) throw new TopologyError(`${name}: unknown topic ${topic}`);
    if (push !== undefined && push !== 'keep') validatePush(name, push);
    checkRange(`${name}.ackDeadlineSeconds`, settings.ackDeadlineSeconds, 10, 600);
    checkRange(`${name}.minimumBackoffSeconds`, settings.minimumBackoffSeconds, 0, 600);
    checkRange(`${name}.maximumBackoffSeconds`, settings.maximumBackoffSeconds, 0, 600);
    if (settings.minimumBackoffSeconds > settings.maximumBackoffSeconds) {
      throw new TopologyError(`${name}: minimumBackoffSeconds > maximumBackoffSeconds`);
    }
    checkRange(`${name}.messageRetentionSeconds`, settings.messageRetentionSeconds, 600, 604800);
    if (settings.deadLetter !== undefined) {
      checkRange(`${name}.maxDeliveryAttempts`, settings.deadLetter.maxDeliveryAttempts, 5, 100);
      if (!topicNames.has(settings.deadLetter.topic)) {
        throw new TopologyError(`${name}: unknown dead-letter topic ${settings.deadLetter.topic}`);
      }
    }
  }
}

const EMAIL_PATTERN = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

function validatePush(name: string, push: PushEndpoint): void {
  let url: URL;
  try {
    url = new URL(push.endpoint);
  } catch {
    throw new TopologyError(`${name}: push endpoint is not a URL: ${push.endpoint}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TopologyError(`${name}: push endpoint must be http(s): ${push.endpoint}`);
  }
  if (push.audience.trim() === '') throw new TopologyError(`${name}: push audience is empty`);
  if (!EMAIL_PATTERN.test(push.serviceAccountEmail)) {
    throw new TopologyError(
      `${name}: push service account is not an email: ${push.serviceAccountEmail}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Applying to Pub/Sub (emulator or GCP)

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export interface PlanItem {
  action: 'create' | 'update' | 'unchanged';
  kind: 'topic' | 'subscription';
  name: string;
  changes: FieldChange[];
}

export interface ApplyTopologyOptions {
  /** Compute the plan without creating or updating anything. */
  dryRun?: boolean;
}

/** The Pub/Sub fields this module owns, in the shape the API returns them. */
interface ObservedSettings {
  topic: string;
  ackDeadlineSeconds: number;
  minimumBackoffSeconds: number | null;
  maximumBackoffSeconds: number | null;
  deadLetterTopic: string | null;
  maxDeliveryAttempts: number | null;
  retainAckedMessages: boolean;
  messageRetentionSeconds: number | null;
  neverExpires: boolean;
  /** null: pull. */
  pushEndpoint: string | null;
  pushOidcServiceAccountEmail: string | null;
  pushOidcAudience: string | null;
}

interface DurationLike {
  seconds?: number | string | { toString(): string } | null;
}

interface SubscriptionMetadataLike {
  topic?: string | null;
  ackDeadlineSeconds?: number | null;
  retainAckedMessages?: boolean | null;
  messageRetentionDuration?: DurationLike | null;
  retryPolicy?: {
    minimumBackoff?: DurationLike | null;
    maximumBackoff?: DurationLike | null;
  } | null;
  deadLetterPolicy?: {
    deadLetterTopic?: string | null;
    maxDeliveryAttempts?: number | null;
  } | null;
  expirationPolicy?: { ttl?: DurationLike | null } | null;
  pushConfig?: {
    pushEndpoint?: string | null;
    oidcToken?: { serviceAccountEmail?: string | null; audience?: string | null } | null;
  } | null;
}

function seconds(duration: DurationLike | null | undefined): number | null {
  if (duration === null || duration === undefined || duration.seconds === null) return null;
  if (duration.seconds === undefined) return 0;
  return Number(String(duration.seconds));
}

function observe(metadata: SubscriptionMetadataLike): ObservedSettings {
  const ttl = metadata.expirationPolicy?.ttl;
  // A pull subscription reports an empty pushConfig (pushEndpoint '').
  const pushEndpoint = metadata.pushConfig?.pushEndpoint || null;
  return {
    topic: metadata.topic ?? '',
    ackDeadlineSeconds: metadata.ackDeadlineSeconds ?? 0,
    minimumBackoffSeconds: seconds(metadata.retryPolicy?.minimumBackoff),
    maximumBackoffSeconds: seconds(metadata.retryPolicy?.maximumBackoff),
    deadLetterTopic: metadata.deadLetterPolicy?.deadLetterTopic || null,
    maxDeliveryAttempts: metadata.deadLetterPolicy?.deadLetterTopic
      ? (metadata.deadLetterPolicy.maxDeliveryAttempts ?? null)
      : null,
    retainAckedMessages: metadata.retainAckedMessages ?? false,
    messageRetentionSeconds: seconds(metadata.messageRetentionDuration),
    // An expirationPolicy present with an empty ttl means "never expires".
    neverExpires:
      metadata.expirationPolicy !== null &&
      metadata.expirationPolicy !== undefined &&
      (ttl === null || ttl === undefined),
    pushEndpoint,
    pushOidcServiceAccountEmail:
      pushEndpoint === null ? null : metadata.pushConfig?.oidcToken?.serviceAccountEmail || null,
    pushOidcAudience:
      pushEndpoint === null ? null : metadata.pushConfig?.oidcToken?.audience || null,
  };
}

function desired(spec: SubscriptionSpec, topicPath: (name: string) => string): ObservedSettings {
  const { settings } = spec;
  return {
    topic: topicPath(spec.topic),
    ackDeadlineSeconds: settings.ackDeadlineSeconds,
    minimumBackoffSeconds: settings.minimumBackoffSeconds,
    maximumBackoffSeconds: settings.maximumBackoffSeconds,
    deadLetterTopic: settings.deadLetter ? topicPath(settings.deadLetter.topic) : null,
    maxDeliveryAttempts: settings.deadLetter?.maxDeliveryAttempts ?? null,
    retainAckedMessages: settings.retainAckedMessages,
    messageRetentionSeconds: settings.messageRetentionSeconds,
    neverExpires: true,
    ...pushFields(spec.push),
  };
}

type PushFields = Pick<
  ObservedSettings,
  'pushEndpoint' | 'pushOidcServiceAccountEmail' | 'pushOidcAudience'
>;

function pushFields(push: PushDelivery | undefined): PushFields {
  // 'keep' is excluded from the diff (PUSH_FIELDS); the values here are never compared.
  if (push === undefined || push === 'keep') {
    return { pushEndpoint: null, pushOidcServiceAccountEmail: null, pushOidcAudience: null };
  }
  return {
    pushEndpoint: push.endpoint,
    pushOidcServiceAccountEmail: push.serviceAccountEmail,
    pushOidcAudience: push.audience,
  };
}

const PUSH_FIELDS: readonly (keyof PushFields)[] = [
  'pushEndpoint',
  'pushOidcServiceAccountEmail',
  'pushOidcAudience',
];

/** Fields of ObservedSettings -> the top-level Subscription field setMetadata must send. */
const UPDATE_FIELD: Record<Exclude<keyof ObservedSettings, 'topic'>, string> = {
  ackDeadlineSeconds: 'ackDeadlineSeconds',
  minimumBackoffSeconds: 'retryPolicy',
  maximumBackoffSeconds: 'retryPolicy',
  deadLetterTopic: 'deadLetterPolicy',
  maxDeliveryAttempts: 'deadLetterPolicy',
  retainAckedMessages: 'retainAckedMessages',
  messageRetentionSeconds: 'messageRetentionDuration',
  neverExpires: 'expirationPolicy',
  pushEndpoint: 'pushConfig',
  pushOidcServiceAccountEmail: 'pushConfig',
  pushOidcAudience: 'pushConfig',
};

function diff(
  observed: ObservedSettings,
  wanted: ObservedSettings,
  keepPush: boolean,
): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of Object.keys(UPDATE_FIELD) as (keyof typeof UPDATE_FIELD)[]) {
    if (keepPush && (PUSH_FIELDS as readonly string[]).includes(field)) continue;
    if (observed[field] !== wanted[field]) {
      changes.push({ field, from: observed[field], to: wanted[field] });
    }
  }
  return changes;
}

/** The Subscription.pushConfig for `push`: empty for pull. */
function pushConfigResource(push: PushEndpoint | undefined) {
  if (push === undefined) return {};
  return {
    pushEndpoint: push.endpoint,
    oidcToken: { serviceAccountEmail: push.serviceAccountEmail, audience: push.audience },
  };
}

function subscriptionResource(spec: SubscriptionSpec, topicPath: (name: string) => string) {
  const { settings } = spec;
  return {
    ackDeadlineSeconds: settings.ackDeadlineSeconds,
    retryPolicy: {
      minimumBackoff: { seconds: settings.minimumBackoffSeconds },
      maximumBackoff: { seconds: settings.maximumBackoffSeconds },
    },
    // Clearing a dead-letter policy is done by sending an empty one with the field mask.
    deadLetterPolicy: settings.deadLetter
      ? {
          deadLetterTopic: topicPath(settings.deadLetter.topic),
          maxDeliveryAttempts: settings.deadLetter.maxDeliveryAttempts,
        }
      : null,
    retainAckedMessages: settings.retainAckedMessages,
    messageRetentionDuration: { seconds: settings.messageRetentionSeconds },
    expirationPolicy: { ttl: null },
    // An empty pushConfig turns a push subscription back into pull; 'keep' sends none.
    ...(spec.push === 'keep' ? {} : { pushConfig: pushConfigResource(spec.push) }),
  };
}

/**
 * Makes Pub/Sub match `topology`: creates missing topics and subscriptions and updates drifted
 * subscription settings in place (setMetadata with a field mask). Idempotent: a second run
 * returns only 'unchanged'. Never deletes anything. A subscription attached to a different
 * topic cannot be fixed in place and raises TopologyError (delete it deliberately).
 */
export async function applyTopology(
  pubsub: PubSub,
  topology: Topology,
  options: ApplyTopologyOptions = {},
): Promise<PlanItem[]> {
  validateTopology(topology);
  const dryRun = options.dryRun ?? false;
  // Resolves the project id (ADC) so that full resource names can be compared.
  await pubsub.getClientConfig();
  const topicPath = (name: string): string => `projects/${pubsub.projectId}/topics/${name}`;
  const plan: PlanItem[] = [];

  for (const { name } of topology.topics) {
    const [exists] = await pubsub.topic(name).exists();
    if (exists) {
      plan.push({ action: 'unchanged', kind: 'topic', name, changes: [] });
      continue;
    }
    if (!dryRun) {
      try {
        await pubsub.createTopic(name);
      } catch (error) {
        // Another applier won the race: the topic exists, which is all we wanted.
        if (grpcCode(error) !== GRPC_ALREADY_EXISTS) throw error;
      }
    }
    plan.push({ action: 'create', kind: 'topic', name, changes: [] });
  }

  for (const spec of topology.subscriptions) {
    plan.push(await applySubscription(pubsub, spec, topicPath, dryRun));
  }
  return plan;
}

async function readSubscription(
  pubsub: PubSub,
  name: string,
): Promise<SubscriptionMetadataLike | undefined> {
  try {
    const [metadata] = await pubsub.subscription(name).getMetadata();
    return metadata;
  } catch (error) {
    if (grpcCode(error) === GRPC_NOT_FOUND) return undefined;
    throw error;
  }
}

async function applySubscription(
  pubsub: PubSub,
  spec: SubscriptionSpec,
  topicPath: (name: string) => string,
  dryRun: boolean,
): Promise<PlanItem> {
  const wanted = desired(spec, topicPath);
  let metadata = await readSubscription(pubsub, spec.name);
  if (metadata === undefined) {
    if (dryRun) {
      return { action: 'create', kind: 'subscription', name: spec.name, changes: [] };
    }
    try {
      await pubsub
        .topic(spec.topic)
        .createSubscription(spec.name, subscriptionResource(spec, topicPath));
      return { action: 'create', kind: 'subscription', name: spec.name, changes: [] };
    } catch (error) {
      if (grpcCode(error) !== GRPC_ALREADY_EXISTS) throw error;
      // Created concurrently: fall through and converge its settings.
      metadata = await readSubscription(pubsub, spec.name);
      if (metadata === undefined) throw error;
    }
  }
  const observed = observe(metadata);
  if (observed.topic !== wanted.topic) {
    throw new TopologyError(
      `subscription ${spec.name} is attached to ${observed.topic}, expected ${wanted.topic}; ` +
        'a subscription cannot change topic: delete it and apply again',
    );
  }
  const changes = diff(observed, wanted, spec.push === 'keep');
  if (changes.length === 0) {
    return { action: 'unchanged', kind: 'subscription', name: spec.name, changes };
  }
  if (!dryRun) {
    const resource = subscriptionResource(spec, topicPath);
    const fields = new Set(changes.map((c) => UPDATE_FIELD[c.field as keyof typeof UPDATE_FIELD]));
    const update = Object.fromEntries(
      Object.entries(resource).filter(([field]) => fields.has(field)),
    );
    await pubsub.subscription(spec.name).setMetadata(update);
  }
  return { action: 'update', kind: 'subscription', name: spec.name, changes };
}
