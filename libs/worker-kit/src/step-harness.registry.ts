import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ArtifactStore } from '@tda/artifacts';
import { STEP_TYPES, TdaError, validate, type StepType } from '@tda/contracts';
import type { FlowRunStore, StepCheckpointStore } from '@tda/flow-store';
import type { Publisher } from '@tda/messaging';
import { sanitizeForLog, type Logger } from '@tda/observability';
import type { StepHarnessMetrics } from './harness-metrics';
import type { HarnessOutcome } from './harness-outcome';
import type { StepHarnessPolicy } from './harness-policy';
import { StepHarness, type DeliveryMeta } from './harness/step-harness';
import type { AnyStepHandler } from './step-handler';

/** A worker that cannot run as configured: thrown at boot, never at the first message. */
export class WorkerConfigError extends TdaError {
  constructor(message: string) {
    super('INVALID_REQUEST', message);
  }
}

const KNOWN_STEP_TYPES: ReadonlySet<string> = new Set(STEP_TYPES);

/**
 * One handler per step type (the convention of immich's job repository setup()): two handlers
 * for one type would race for the same messages with different logic, and a consumed step type
 * without a handler would ack every message as unroutable. Both are refused at boot.
 */
export function assertHandlerSet(
  handlers: readonly AnyStepHandler[],
  consumedStepTypes?: readonly string[],
): void {
  if (handlers.length === 0)
    throw new WorkerConfigError('a worker needs at least one AnyStepHandler');
  const byType = new Map<string, AnyStepHandler>();
  for (const handler of handlers) {
    if (!KNOWN_STEP_TYPES.has(handler.descriptor.stepType)) {
      throw new WorkerConfigError(
        `handler ${handler.constructor.name} declares unknown stepType '${String(handler.descriptor.stepType)}'`,
      );
    }
    const existing = byType.get(handler.descriptor.stepType);
    if (existing !== undefined) {
      throw new WorkerConfigError(
        `two handlers for step type ${handler.descriptor.stepType} (${existing.constructor.name}, ${handler.constructor.name}): register exactly one handler per step type`,
      );
    }
    byType.set(handler.descriptor.stepType, handler);
  }
  for (const stepType of consumedStepTypes ?? []) {
    if (!byType.has(stepType)) {
      throw new WorkerConfigError(
        `configured to consume step type ${stepType} but no handler serves it (handlers: ${[...byType.keys()].join(', ')})`,
      );
    }
  }
}

/** `<host>/<pid>/<random>`: unique per process, so a restarted worker never inherits a lease. */
export function defaultWorkerOwner(service = 'worker'): string {
  return `${service}/${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
}

export interface StepHarnessRegistryOptions {
  handlers: readonly AnyStepHandler[];
  store: FlowRunStore;
  /** Step events are published through it (a MessageBroker is a Publisher). */
  publisher: Publisher;
  artifacts: ArtifactStore;
  logger: Logger;
  clock?: () => Date;
  owner?: string;
  policy?: Partial<StepHarnessPolicy>;
  metrics?: StepHarnessMetrics;
  /** Where handlers' checkpoints go (ctx.checkpoint): the run store's StepCheckpointStore. */
  checkpoints?: StepCheckpointStore;
  /** Step types whose step-ready subscriptions this process consumes (default: the handlers'). */
  stepTypes?: readonly StepType[];
}

/** The harnesses of one worker process, by step type, and the dispatch of step-ready bodies. */
export class StepHarnessRegistry {
  readonly owner: string;
  private readonly harnesses = new Map<StepType, StepHarness>();

  constructor(options: StepHarnessRegistryOptions) {
    assertHandlerSet(options.handlers, options.stepTypes);
    this.owner = options.owner ?? defaultWorkerOwner();
    for (const handler of options.handlers) {
      this.harnesses.set(
        handler.descriptor.stepType,
        new StepHarness({
          handler,
          store: options.store,
          artifacts: options.artifacts,
          publisher: options.publisher,
          logger: options.logger,
          owner: this.owner,
          ...(options.clock === undefined ? {} : { clock: options.clock }),
          ...(options.policy === undefined ? {} : { policy: options.policy }),
          ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
          ...(options.checkpoints === undefined ? {} : { checkpoints: options.checkpoints }),
        }),
      );
    }
  }

  stepTypes(): StepType[] {
    return [...this.harnesses.keys()];
  }

  has(stepType: string): boolean {
    return this.harnesses.has(stepType as StepType);
  }

  harnessFor(stepType: StepType): StepHarness | undefined {
    return this.harnesses.get(stepType);
  }

  /** Routes a step-ready body to the harness of its stepType (throws → nack, like the harness). */
  dispatch(body: unknown, meta: DeliveryMeta): Promise<HarnessOutcome> {
    const stepType =
      typeof body === 'object' && body !== null
        ? (body as Record<string, unknown>)['stepType']
        : undefined;
    const harness =
      typeof stepType === 'string' ? this.harnesses.get(stepType as StepType) : undefined;
    if (harness !== undefined) return harness.handleStepReady(body, meta);
    const parsed = validate.stepReady(body);
    if (!parsed.ok) {
      const issues = sanitizeForLog(parsed.issues);
      return Promise.resolve({ action: 'ack', kind: 'invalid', reason: 'invalid_message', issues });
    }
    // A valid message for a step type this worker does not serve (a misrouted subscription):
    // redelivering it here can never succeed.
    return Promise.resolve({ action: 'ack', kind: 'invalid', reason: 'no_handler_for_step_type' });
  }

  /** Aborts running handlers (reason 'shutdown') and waits for every delivery to settle. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.harnesses.values()].map((harness) => harness.shutdown()));
  }
}
