import { Inject, Injectable } from '@nestjs/common';
import { STEP_TYPES, type StepType } from '@tda/contracts';
import {
  InvalidRequestError,
  previewStepEventReplay,
  previewStepReadyReplay,
  type StepEventRunPreview,
  type StepReadyReplayItem,
} from '@tda/flow-engine';
import {
  isValidSnapshotName,
  SNAPSHOT_NAME_PATTERN,
  SnapshotAlreadyExistsError,
  SnapshotNotFoundError,
  stepEventsSubscription,
  stepEventsTopic,
  stepReadySubscription,
  stepReadyTopic,
  SubscriptionNotFoundError,
  supportsSnapshots,
  type MessageBroker,
  type SnapshotBroker,
  type SnapshotInfo,
} from '@tda/messaging';
import type { FlowRunStore } from '@tda/flow-store';
import { describeError, logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import {
  CLOCK,
  LOGGER,
  MESSAGE_BROKER,
  ORCHESTRATOR_CONFIG,
  RUN_STORE,
  type Clock,
} from '../orchestrator.tokens';
import { listRunPages } from '../runs/run-pages';
import {
  ReplayBrokerError,
  ReplayTargetNotFoundError,
  SnapshotExistsError,
} from './recovery.errors';

/** Pub/Sub keeps a snapshot for 7 days minus the age of its oldest unacked message. */
const SNAPSHOT_LIFETIME_MS = 7 * 24 * 3_600_000;
/** Bound on the run pages a dry run reads (100 runs a page); the answer says `truncated`. */
const MAX_SCAN_PAGES = 20;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const REPLAY_KEYS = new Set(['subscription', 'time', 'snapshot', 'dryRun']);
const SNAPSHOT_KEYS = new Set(['subscription', 'name']);

/** Said in every replay answer: where the listing comes from and what it cannot know. */
const REPLAY_SOURCE_NOTE =
  "Derived from TDA's run documents (step readyAt for step-ready, finishedAt of worker-finalized steps for step-events), not from Pub/Sub: Pub/Sub cannot list the retained messages a seek redelivers. Each decision is what the receiver would do now by the same rules it applies (isExecutable / advance).";

/** A subscription replay applies to: a step-ready subscription or the step-events one. */
export type ReplayTarget =
  | { kind: 'step_ready'; subscription: string; topic: string; stepType: StepType }
  | { kind: 'step_events'; subscription: string; topic: string };

export interface ReplayRequest {
  subscription: string;
  time?: string;
  snapshot?: string;
  dryRun: boolean;
}

export interface ReplayResponse {
  subscription: string;
  kind: ReplayTarget['kind'];
  stepType?: StepType;
  dryRun: boolean;
  /** true once the subscription was sought (never for a dry run). */
  seeked: boolean;
  target: { time: string } | { snapshot: string };
  /** Lower bound of the publish times replayed: `time`, or the snapshot's expireTime - 7 days. */
  since: string;
  source: 'run_documents';
  note: string;
  scannedRuns: number;
  /** More runs than one answer scans (MAX_SCAN_PAGES × 100): the listing is incomplete. */
  truncated: boolean;
  /** step_ready: the steps that would receive a message, with what the worker would do. */
  steps?: StepReadyReplayItem[];
  /** step_events: the runs whose events would be redelivered, with what the advance would do. */
  runs?: StepEventRunPreview[];
  /** Decisions counted: execute / takeover / noop (step_ready), advance / noop (step_events). */
  counts: Record<string, number>;
}

export interface SnapshotResponse {
  name: string;
  subscription: string;
  topic: string;
  expireTime?: string;
  /** expireTime - 7 days: a seek to it replays messages published at or after this. */
  replaysFrom?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rejectUnknownKeys(body: Record<string, unknown>, allowed: ReadonlySet<string>): void {
  const unknown = Object.keys(body).filter((key) => !allowed.has(key));
  if (unknown.length > 0) {
    throw new InvalidRequestError(`unknown body fields: ${unknown.join(', ')}`, {
      unknownFields: unknown,
      allowed: [...allowed],
    });
  }
}

/**
 * Replay (DESIGN §5.6, issue 5): seek a step-ready or the step-events subscription back to a
 * time or a snapshot so Pub/Sub redelivers what it retained. Safe by construction — every
 * receiver re-reads the run and decides (a finished run's messages are no-ops) — and previewed:
 * the dry run (and every real replay, before it seeks) lists from the run documents which steps
 * would get a message and what each receiver would do.
 */
@Injectable()
export class ReplayService {
  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'list'>,
    @Inject(MESSAGE_BROKER) private readonly broker: MessageBroker,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_PUBSUB_PREFIX'>,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The subscriptions of this deployment's topology replay applies to. */
  targets(): ReplayTarget[] {
    const prefix = this.config.TDA_PUBSUB_PREFIX;
    return [
      ...STEP_TYPES.map((stepType): ReplayTarget => ({
        kind: 'step_ready',
        subscription: stepReadySubscription(stepType, prefix),
        topic: stepReadyTopic(stepType, prefix),
        stepType,
      })),
      {
        kind: 'step_events',
        subscription: stepEventsSubscription(prefix),
        topic: stepEventsTopic(prefix),
      },
    ];
  }

  /** POST /admin/replay. */
  async replay(body: unknown): Promise<ReplayResponse> {
    const request = this.parseReplay(body);
    const target = this.target(request.subscription);
    const now = this.clock();
    let since: Date;
    if (request.time !== undefined) {
      since = new Date(request.time);
    } else {
      const snapshot = await this.snapshotFor(request.snapshot ?? '', target);
      // Without an expireTime nothing bounds the replay from below: list everything.
      since = new Date(
        (snapshot.expireTime?.getTime() ?? SNAPSHOT_LIFETIME_MS) - SNAPSHOT_LIFETIME_MS,
      );
    }
    const response = await this.preview(target, request, since, now);
    if (request.dryRun) return response;

    await this.seek(target, request);
    logEvent(this.logger, 'info', 'subscription_seeked', {
      subscription: target.subscription,
      ...(request.time === undefined ? { snapshot: request.snapshot } : { time: request.time }),
      previewed: response.counts,
    });
    return { ...response, seeked: true };
  }

  /** POST /admin/snapshots {subscription, name}. */
  async createSnapshot(body: unknown): Promise<SnapshotResponse> {
    if (!isRecord(body)) {
      throw new InvalidRequestError('body must be an object {subscription, name}', {
        field: 'body',
      });
    }
    rejectUnknownKeys(body, SNAPSHOT_KEYS);
    const { subscription, name } = body;
    if (typeof subscription !== 'string') {
      throw new InvalidRequestError('subscription must be a string', { field: 'subscription' });
    }
    this.assertSnapshotName(name, 'name');
    const target = this.target(subscription);
    const broker = this.snapshotBroker();
    let info: SnapshotInfo;
    try {
      info = await broker.createSnapshot(target.subscription, name);
    } catch (error) {
      throw this.brokerError(error, target.subscription, name);
    }
    const response: SnapshotResponse = {
      name: info.name,
      subscription: target.subscription,
      topic: info.topic === '' ? target.topic : info.topic,
    };
    if (info.expireTime !== undefined) {
      response.expireTime = info.expireTime.toISOString();
      response.replaysFrom = new Date(
        info.expireTime.getTime() - SNAPSHOT_LIFETIME_MS,
      ).toISOString();
    }
    logEvent(this.logger, 'info', 'snapshot_created', { ...response });
    return response;
  }

  // ---------------------------------------------------------------------------------------------

  private parseReplay(body: unknown): ReplayRequest {
    if (!isRecord(body)) {
      throw new InvalidRequestError(
        'body must be an object {subscription, time | snapshot, dryRun}',
        {
          field: 'body',
        },
      );
    }
    rejectUnknownKeys(body, REPLAY_KEYS);
    const { subscription, time, snapshot, dryRun } = body;
    if (typeof subscription !== 'string') {
      throw new InvalidRequestError('subscription must be a string', { field: 'subscription' });
    }
    if (dryRun !== undefined && typeof dryRun !== 'boolean') {
      throw new InvalidRequestError('dryRun must be a boolean', { field: 'dryRun' });
    }
    if ((time === undefined) === (snapshot === undefined)) {
      throw new InvalidRequestError('give exactly one of time and snapshot', {
        fields: ['time', 'snapshot'],
        given: [
          time === undefined ? [] : ['time'],
          snapshot === undefined ? [] : ['snapshot'],
        ].flat(),
      });
    }
    const request: ReplayRequest = { subscription, dryRun: dryRun ?? false };
    if (time !== undefined) {
      if (typeof time !== 'string' || !RFC3339.test(time) || Number.isNaN(Date.parse(time))) {
        throw new InvalidRequestError('time must be an RFC 3339 timestamp', {
          field: 'time',
          example: '2026-01-15T10:00:00Z',
        });
      }
      const now = this.clock();
      if (Date.parse(time) > now.getTime()) {
        throw new InvalidRequestError(
          'time is in the future: there is nothing to replay after it',
          {
            field: 'time',
            time,
            now: now.toISOString(),
          },
        );
      }
      request.time = new Date(time).toISOString();
    } else {
      this.assertSnapshotName(snapshot, 'snapshot');
      request.snapshot = snapshot;
    }
    return request;
  }

  private assertSnapshotName(name: unknown, field: string): asserts name is string {
    if (!isValidSnapshotName(name)) {
      throw new InvalidRequestError(
        `${field} must be a snapshot name: 3-255 characters, a letter first, then letters, digits or -_.~+%, not starting with goog`,
        { field, pattern: SNAPSHOT_NAME_PATTERN.source },
      );
    }
  }

  private target(subscription: string): ReplayTarget {
    const targets = this.targets();
    const found = targets.find((t) => t.subscription === subscription);
    if (found === undefined) {
      throw new InvalidRequestError(
        `'${subscription.slice(0, 200)}' is not a subscription replay applies to (a step-ready subscription or the step-events one)`,
        { field: 'subscription', allowed: targets.map((t) => t.subscription) },
      );
    }
    return found;
  }

  private snapshotBroker(): MessageBroker & SnapshotBroker {
    const { broker } = this;
    if (!supportsSnapshots(broker)) {
      throw new InvalidRequestError('the configured message broker does not support snapshots', {
        field: 'snapshot',
      });
    }
    return broker;
  }

  /** The snapshot, checked to exist and to belong to the subscription's topic. */
  private async snapshotFor(name: string, target: ReplayTarget): Promise<SnapshotInfo> {
    let info: SnapshotInfo | null;
    try {
      info = await this.snapshotBroker().getSnapshot(name);
    } catch (error) {
      throw this.brokerError(error, target.subscription, name);
    }
    if (info === null) {
      throw new ReplayTargetNotFoundError(`snapshot '${name}' does not exist`, { snapshot: name });
    }
    if (info.topic !== '' && info.topic !== target.topic) {
      throw new InvalidRequestError(
        `snapshot '${name}' was taken on topic ${info.topic}, not on ${target.topic} of ${target.subscription}`,
        { field: 'snapshot', snapshot: name, snapshotTopic: info.topic, topic: target.topic },
      );
    }
    return info;
  }

  private async seek(target: ReplayTarget, request: ReplayRequest): Promise<void> {
    try {
      if (request.time !== undefined) {
        await this.broker.seek(target.subscription, new Date(request.time));
      } else {
        await this.snapshotBroker().seekToSnapshot(target.subscription, request.snapshot ?? '');
      }
    } catch (error) {
      throw this.brokerError(error, target.subscription, request.snapshot);
    }
  }

  /** Broker failures → 404 / 409 / 502; the raw error is logged, never returned. */
  private brokerError(error: unknown, subscription: string, snapshot?: string): Error {
    if (error instanceof InvalidRequestError) return error;
    if (error instanceof SubscriptionNotFoundError) {
      return new ReplayTargetNotFoundError(
        `subscription '${subscription}' does not exist (is the topology applied?)`,
        { subscription },
      );
    }
    if (error instanceof SnapshotNotFoundError) {
      return new ReplayTargetNotFoundError(`snapshot '${snapshot ?? ''}' does not exist`, {
        snapshot,
      });
    }
    if (error instanceof SnapshotAlreadyExistsError) {
      return new SnapshotExistsError(`snapshot '${snapshot ?? ''}' already exists`, { snapshot });
    }
    logEvent(
      this.logger,
      'warn',
      'http_request_failed',
      {
        subscription,
        ...(snapshot === undefined ? {} : { snapshot }),
        error: describeError(error),
      },
      'broker seek/snapshot failed',
    );
    return new ReplayBrokerError('the message broker failed the seek/snapshot operation', {
      subscription,
      ...(snapshot === undefined ? {} : { snapshot }),
    });
  }

  private async preview(
    target: ReplayTarget,
    request: ReplayRequest,
    since: Date,
    now: Date,
  ): Promise<ReplayResponse> {
    // Every run, newest first, up to MAX_SCAN_PAGES pages.
    const { runs, truncated } = await listRunPages(this.store, {}, MAX_SCAN_PAGES);
    const response: ReplayResponse = {
      subscription: target.subscription,
      kind: target.kind,
      dryRun: request.dryRun,
      seeked: false,
      target:
        request.time === undefined ? { snapshot: request.snapshot ?? '' } : { time: request.time },
      since: since.toISOString(),
      source: 'run_documents',
      note: REPLAY_SOURCE_NOTE,
      scannedRuns: runs.length,
      truncated,
      counts: {},
    };
    const count = (key: string): void => {
      response.counts[key] = (response.counts[key] ?? 0) + 1;
    };
    if (target.kind === 'step_ready') {
      response.stepType = target.stepType;
      const steps = runs.flatMap((run) =>
        previewStepReadyReplay(run, target.stepType, { since, now }),
      );
      for (const step of steps) count(step.decision);
      response.steps = steps;
    } else {
      const previews = runs.flatMap((run) => previewStepEventReplay(run, { since, now }) ?? []);
      for (const preview of previews) count(preview.decision);
      response.runs = previews;
    }
    return response;
  }
}
