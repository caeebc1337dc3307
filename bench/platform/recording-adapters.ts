import { performance } from 'node:perf_hooks';
import type { FlowRun } from '@tda/contracts';
import type { RunPatch } from '@tda/flow-engine';
import type {
  FlowRunStore,
  RunCountQuery,
  RunListPage,
  RunListQuery,
  VersionedRun,
} from '@tda/flow-store';
import type {
  MessageBroker,
  MessageListener,
  OutgoingMessage,
  SubscribeOptions,
  SubscriptionHandle,
} from '@tda/messaging';

/** Who made a call: the orchestrator or a worker (the local stack's service names). */
export type Service = string;

/** One call to the run store, with when it was issued and when it came back. */
export interface StoreCall {
  service: Service;
  op: 'create' | 'get' | 'update' | 'list' | 'count';
  runId?: string;
  /** update: false when the precondition failed (or the write threw). */
  ok: boolean;
  start: number;
  end: number;
  patch?: RunPatch;
  /**
   * Documents billed: a list's documents returned, a count's 1 per 1,000 runs counted (how
   * Firestore bills each).
   */
  docs?: number;
}

/** A publish (start → the broker's ack) or a delivery (end = handed to the listener). */
export interface BusCall {
  service: Service;
  op: 'publish' | 'deliver';
  /** `step-ready` / `step-event` (the messageType attribute). */
  messageType: string;
  runId: string;
  stepId: string;
  start: number;
  end: number;
}

/**
 * Everything the services asked of the run store and the bus during a measurement: the cost
 * counts (issue 16: counted, not estimated) and the timestamps the hops are cut from.
 */
export class CallLog {
  readonly store: StoreCall[] = [];
  readonly bus: BusCall[] = [];
  /** Called on every committed run-level status (the driver's completion signal). */
  onRunStatus: (runId: string, status: unknown) => void = () => undefined;

  clear(): void {
    this.store.length = 0;
    this.bus.length = 0;
  }
}

/**
 * Times `call` into the log; an update that throws is recorded as not ok and rethrown. One
 * object of one shape per call, no spreads: this runs around every store call of the stack being
 * measured.
 */
async function timed<T>(
  log: CallLog,
  entry: Pick<StoreCall, 'service' | 'op' | 'runId' | 'patch'>,
  call: () => Promise<T>,
  docs?: (result: T) => number,
): Promise<T> {
  const start = performance.now();
  let ok = false;
  let billed: number | undefined;
  try {
    const result = await call();
    ok = true;
    billed = docs?.(result);
    return result;
  } finally {
    log.store.push({
      service: entry.service,
      op: entry.op,
      runId: entry.runId,
      ok,
      start,
      end: performance.now(),
      patch: entry.patch,
      docs: billed,
    });
  }
}

/** A FlowRunStore that records every call of one service into the log. */
export class RecordingRunStore implements FlowRunStore {
  constructor(
    private readonly inner: FlowRunStore,
    private readonly service: Service,
    private readonly log: CallLog,
  ) {}

  create(run: FlowRun): Promise<VersionedRun> {
    const entry = { service: this.service, op: 'create' as const, runId: run.runId };
    return timed(this.log, entry, () => this.inner.create(run));
  }

  get(runId: string): Promise<VersionedRun | null> {
    return timed(this.log, { service: this.service, op: 'get', runId }, () =>
      this.inner.get(runId),
    );
  }

  async update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    const entry = { service: this.service, op: 'update' as const, runId, patch };
    const written = await timed(this.log, entry, () =>
      this.inner.update(runId, patch, expectedVersion),
    );
    if ('status' in patch) this.log.onRunStatus(runId, patch['status']);
    return written;
  }

  list(query: RunListQuery): Promise<RunListPage> {
    return timed(
      this.log,
      { service: this.service, op: 'list' },
      () => this.inner.list(query),
      (page) => page.runs.length,
    );
  }

  count(query: RunCountQuery): Promise<number> {
    return timed(
      this.log,
      { service: this.service, op: 'count' },
      () => this.inner.count(query),
      (n) => Math.max(1, Math.ceil(n / 1000)),
    );
  }
}

/** One bus call, one shape (ids from the message's attributes). */
function busCall(
  service: Service,
  op: BusCall['op'],
  attributes: Readonly<Record<string, string>> | undefined,
  start: number,
  end: number,
): BusCall {
  return {
    service,
    op,
    messageType: attributes?.['messageType'] ?? 'other',
    runId: attributes?.['runId'] ?? '',
    stepId: attributes?.['stepId'] ?? '',
    start,
    end,
  };
}

/** A MessageBroker that records one service's publishes and deliveries into the log. */
export class RecordingBroker implements MessageBroker {
  constructor(
    private readonly inner: MessageBroker,
    private readonly service: Service,
    private readonly log: CallLog,
  ) {}

  async publish(topic: string, message: OutgoingMessage): Promise<string> {
    const start = performance.now();
    const id = await this.inner.publish(topic, message);
    const end = performance.now();
    this.log.bus.push(busCall(this.service, 'publish', message.attributes, start, end));
    return id;
  }

  subscribe(
    subscription: string,
    onMessage: MessageListener,
    options: SubscribeOptions,
  ): Promise<SubscriptionHandle> {
    return this.inner.subscribe(
      subscription,
      (message) => {
        const at = performance.now();
        this.log.bus.push(busCall(this.service, 'deliver', message.attributes, at, at));
        onMessage(message);
      },
      options,
    );
  }

  seek(subscription: string, time: Date): Promise<void> {
    return this.inner.seek(subscription, time);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
