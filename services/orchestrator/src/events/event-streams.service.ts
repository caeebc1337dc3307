import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import {
  decodeRunState,
  InvalidRequestError,
  isTerminalRunStatus,
  knownStateOf,
  runEventsSince,
  stepOrder,
  type KnownRunState,
} from '@tda/flow-engine';
import type { RunChangeFeed, RunFeedSubscription } from '@tda/flow-store';
import { logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import {
  LiveEventsUnavailableError,
  ShuttingDownError,
  StreamLimitError,
} from '../orchestrator.errors';
import {
  CLOCK,
  LOGGER,
  ORCHESTRATOR_CONFIG,
  RUN_CHANGE_FEED,
  type Clock,
} from '../orchestrator.tokens';
import { RunsService } from '../runs/runs.service';
import { SseWriter, type StreamResponse } from './sse-writer';
import { decodeCursor, encodeCursor, remember, type StreamCursor } from './stream-cursor';

type StreamConfig = Pick<
  OrchestratorConfig,
  'TDA_SSE_MAX_STREAMS_PER_OWNER' | 'TDA_SSE_HEARTBEAT_MS' | 'TDA_SSE_MAX_STREAM_SECONDS'
>;

/** The request side of a stream: it ends when the client goes away. */
export interface StreamRequest {
  on(event: 'close', listener: () => void): unknown;
}

/** A run changed since `since` only counts when written after it, give or take clock skew. */
const SKEW_MS = 60_000;

interface OpenStream {
  writer: SseWriter;
  finish(reason: string): void;
  counted(n: number): void;
}

/**
 * Live status streams (seed 004 SSE) fed by Firestore real-time listeners through
 * RunChangeFeed: one run's events until it ends, or every run of an owner. Stateless across
 * instances: the event ids carry what the client knows (run-events.ts, stream-cursor.ts), so a
 * reconnect to any instance resumes exactly. Bounded per owner; heartbeats; ended after
 * TDA_SSE_MAX_STREAM_SECONDS and on shutdown, both followed by the client's reconnect.
 */
@Injectable()
export class EventStreams implements BeforeApplicationShutdown {
  private readonly perOwner = new Map<string, number>();
  private closing = false;
  private readonly open = new Set<OpenStream>();

  constructor(
    @Inject(RUN_CHANGE_FEED) private readonly feed: RunChangeFeed | null,
    private readonly runs: RunsService,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: StreamConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** GET /runs/{runId}/events: 404 for another owner's run, before anything is streamed. */
  async streamRun(
    runId: string,
    ownerId: string,
    lastEventId: string | undefined,
    io: { request: StreamRequest; response: StreamResponse },
  ): Promise<void> {
    const feed = this.requireFeed();
    const run = await this.runs.get(runId, ownerId);
    let known: KnownRunState | undefined;
    if (lastEventId !== undefined) {
      known = decodeRunState(lastEventId, stepOrder(run));
      if (known === undefined) {
        throw new InvalidRequestError('Last-Event-ID is not an id of this run’s stream', {
          header: 'Last-Event-ID',
        });
      }
    }
    const stream = this.start(ownerId, io, { kind: 'run', runId, resumed: known !== undefined });
    const subscription = feed.watchRun(
      runId,
      (current) => {
        if (current === null || current.ownerId !== ownerId) return stream.finish('run_gone');
        const events = runEventsSince(known, current);
        for (const event of events) stream.writer.event(event.state, event.type, event.data);
        stream.counted(events.length);
        known = knownStateOf(current);
        if (isTerminalRunStatus(current.status)) stream.finish('run_ended');
      },
      () => stream.finish('feed_error'),
    );
    this.onFinish(stream, subscription);
  }

  /** GET /events/stream: every change of the owner's runs (query-filtered by owner). */
  streamOwner(
    ownerId: string,
    lastEventId: string | undefined,
    io: { request: StreamRequest; response: StreamResponse },
  ): void {
    const feed = this.requireFeed();
    const resumed = lastEventId !== undefined;
    const cursor: StreamCursor = resumed
      ? decodeCursor(lastEventId)
      : { since: this.clock().getTime(), runs: new Map() };
    const stream = this.start(ownerId, io, { kind: 'owner', resumed });
    const since = new Date(cursor.since - SKEW_MS).toISOString();
    const subscription = feed.watchOwner(
      ownerId,
      since,
      (runs) => {
        for (const run of runs) this.sendOwnerRun(stream, cursor, run);
      },
      () => stream.finish('feed_error'),
    );
    this.onFinish(stream, subscription);
  }

  /**
   * Ends every stream and refuses new ones: a client that reconnects during the shutdown would
   * otherwise hold the HTTP server open for TDA_SSE_MAX_STREAM_SECONDS.
   */
  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const stream of [...this.open]) stream.finish('shutdown');
  }

  private sendOwnerRun(stream: OpenStream, cursor: StreamCursor, run: FlowRun): void {
    const entry = cursor.runs.get(run.runId);
    const updatedAt = Date.parse(run.updatedAt);
    const known = entry === undefined ? undefined : decodeRunState(entry.token, stepOrder(run));
    // Not in the cursor and not changed after `since`: the client has seen it already.
    if (entry === undefined && updatedAt <= cursor.since) return;
    const created = known === undefined && Date.parse(run.createdAt) > cursor.since;
    const events = runEventsSince(known, run, { created });
    for (const event of events) {
      remember(cursor, run.runId, event.state, updatedAt);
      stream.writer.event(encodeCursor(cursor), event.type, event.data);
    }
    stream.counted(events.length);
  }

  private requireFeed(): RunChangeFeed {
    if (this.feed === null) throw new LiveEventsUnavailableError();
    return this.feed;
  }

  private start(
    ownerId: string,
    io: { request: StreamRequest; response: StreamResponse },
    fields: Record<string, unknown>,
  ): OpenStream {
    if (this.closing) throw new ShuttingDownError();
    const limit = this.config.TDA_SSE_MAX_STREAMS_PER_OWNER;
    const current = this.perOwner.get(ownerId) ?? 0;
    if (current >= limit) {
      logEvent(this.logger, 'warn', 'event_stream_refused', { ownerId, open: current, limit });
      throw new StreamLimitError(ownerId, current, limit);
    }
    this.perOwner.set(ownerId, current + 1);
    const writer = new SseWriter(io.response);
    writer.open();
    let events = 0;
    let finished = false;
    const heartbeat = setInterval(
      () => writer.comment('heartbeat'),
      this.config.TDA_SSE_HEARTBEAT_MS,
    );
    const lifetime = setTimeout(
      () => stream.finish('max_duration'),
      this.config.TDA_SSE_MAX_STREAM_SECONDS * 1000,
    );
    const stream: OpenStream = {
      writer,
      counted: (n) => {
        events += n;
      },
      finish: (reason) => {
        if (finished) return;
        finished = true;
        clearInterval(heartbeat);
        clearTimeout(lifetime);
        this.open.delete(stream);
        this.perOwner.set(ownerId, (this.perOwner.get(ownerId) ?? 1) - 1);
        writer.end();
        logEvent(this.logger, 'info', 'event_stream_closed', {
          ownerId,
          ...fields,
          reason,
          events,
        });
      },
    };
    this.open.add(stream);
    io.request.on('close', () => stream.finish('client_closed'));
    logEvent(this.logger, 'info', 'event_stream_opened', { ownerId, ...fields });
    return stream;
  }

  private onFinish(stream: OpenStream, subscription: RunFeedSubscription): void {
    const finish = stream.finish;
    stream.finish = (reason) => {
      subscription.close();
      finish(reason);
    };
    if (!this.open.has(stream)) subscription.close();
  }
}
