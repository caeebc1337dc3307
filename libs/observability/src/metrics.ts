import type { ErrorCode, RunStatus, StepStatus, StepType } from '@tda/contracts';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics for TDA services (DESIGN.md §8). Instruments are typed by their label VALUES
 * (e.g. a claim result is 'claimed' | 'conflict' | 'noop'), so a typo is a compile error instead
 * of a new time series. The TS API uses camelCase label keys; the exposition uses Prometheus'
 * snake_case label names (stepType → step_type). Every series also carries `service`.
 *
 * Recording never throws into business code: values a counter cannot take (negative, NaN,
 * Infinity) and non-finite observations are dropped, unknown label keys are ignored and missing
 * ones are exported as "".
 */

export type ClaimResult = 'claimed' | 'conflict' | 'noop';
export type MessageOutcome = 'ack' | 'nack' | 'invalid';
/** 'none' when the step has no error (e.g. SUCCEEDED). */
export type ErrorCodeLabel = ErrorCode | 'none';

export interface LabelledCounter<L> {
  inc(labels: L, value?: number): void;
}

export interface LabelledHistogram<L> {
  observe(labels: L, value: number): void;
  /** Starts a timer; calling the returned function observes the elapsed seconds and returns them. */
  startTimer(labels: L): () => number;
}

// Label shapes are type aliases, not interfaces: aliases are assignable to
// Record<string, string>, so these instruments also fit structural "counter-like" ports such as
// worker-kit's StepHarnessMetrics.
export type StepClaimLabels = {
  stepType: StepType;
  result: ClaimResult;
};
export type StepOutcomeLabels = {
  stepType: StepType;
  status: StepStatus;
  errorCode: ErrorCodeLabel;
};
export type StepDurationLabels = {
  stepType: StepType;
  status: StepStatus;
};
export type MessageHandledLabels = {
  subscription: string;
  outcome: MessageOutcome;
};
export type StepTypeLabels = {
  stepType: StepType;
};
export type RunAdvancedLabels = {
  /** The run status after the advance. */
  runStatus: RunStatus;
};
export type StepDispatchedLabels = {
  stepType: StepType;
  /** Why a step-ready message was published: e.g. 'advance', 'reconcile', 'retry'. */
  reason: string;
};
/** worker-kit harness (libs/worker-kit/src/harness-metrics.ts). */
export type StepDeliveryLabels = {
  stepType: StepType;
  outcome: 'executed' | 'recovered' | 'failed' | 'noop' | 'invalid';
  /** The step status reached, '' if none. */
  status: StepStatus | '';
};
export type StoreConflictLabels = {
  stepType: StepType;
  phase: 'claim' | 'heartbeat' | 'finalize';
};
export type HandlerRetryLabels = {
  stepType: StepType;
  code: string;
};

export interface TdaMetrics {
  readonly service: string;
  /** The registry the instruments live in (add service-specific metrics here if needed). */
  readonly registry: Registry;
  /** tda_step_claims_total{step_type, result} */
  readonly stepClaims: LabelledCounter<StepClaimLabels>;
  /** tda_step_outcomes_total{step_type, status, error_code}: finalized steps. */
  readonly stepOutcomes: LabelledCounter<StepOutcomeLabels>;
  /** tda_step_duration_seconds{step_type, status}: claim to finalize. */
  readonly stepDurationSeconds: LabelledHistogram<StepDurationLabels>;
  /** tda_messages_handled_total{subscription, outcome} */
  readonly messagesHandled: LabelledCounter<MessageHandledLabels>;
  /** tda_lease_lost_total{step_type} */
  readonly leaseLost: LabelledCounter<StepTypeLabels>;
  /** tda_runs_advanced_total{run_status}: advance() writes that changed a run. */
  readonly runsAdvanced: LabelledCounter<RunAdvancedLabels>;
  /** tda_steps_dispatched_total{step_type, reason}: step-ready messages published. */
  readonly stepsDispatched: LabelledCounter<StepDispatchedLabels>;
  /** tda_step_deliveries_total{step_type, outcome, status}: worker-kit harness deliveries. */
  readonly stepDeliveries: LabelledCounter<StepDeliveryLabels>;
  /** tda_store_conflicts_total{step_type, phase}: lost optimistic-concurrency rounds. */
  readonly storeConflicts: LabelledCounter<StoreConflictLabels>;
  /** tda_handler_retries_total{step_type, code}: in-process handler retries. */
  readonly handlerRetries: LabelledCounter<HandlerRetryLabels>;
  /** The Prometheus text exposition of the whole registry. */
  render(): Promise<string>;
  /** The Content-Type to serve render() with. */
  readonly contentType: string;
}

export interface CreateMetricsOptions {
  /** Exported as the `service` label on every series. */
  service: string;
  /**
   * Defaults to a new Registry per call (never prom-client's global one), so tests and the
   * one-process local stack can create several. Pass a shared registry to expose several services
   * on one endpoint: instruments are reused and the `service` label tells them apart.
   */
  registry?: Registry;
  /** Node process metrics (CPU, memory, event loop lag, GC...). Off by default: they cost a
   * little on every scrape and are only useful on a real deployment. */
  collectDefaultMetrics?: boolean;
  /** Metric name prefix; default 'tda_'. */
  prefix?: string;
}

/** Seconds. Steps range from milliseconds (chart export) to the 10-minute LLM call (seed 002). */
export const STEP_DURATION_BUCKETS = [
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900,
] as const;

const registriesWithDefaults = new WeakSet<Registry>();

export function createMetrics(options: CreateMetricsOptions): TdaMetrics {
  const { service } = options;
  if (typeof service !== 'string' || service.length === 0) {
    throw new Error('createMetrics needs a non-empty service name');
  }
  const registry = options.registry ?? new Registry();
  const prefix = options.prefix ?? 'tda_';
  if (options.collectDefaultMetrics === true && !registriesWithDefaults.has(registry)) {
    registriesWithDefaults.add(registry);
    collectDefaultMetrics({ register: registry, prefix });
  }
  const make = { registry, prefix, service };

  return {
    service,
    registry,
    stepClaims: counter(make, 'step_claims_total', 'Step claim attempts by result.', {
      stepType: 'step_type',
      result: 'result',
    }),
    stepOutcomes: counter(
      make,
      'step_outcomes_total',
      'Finalized steps by status and error code.',
      {
        stepType: 'step_type',
        status: 'status',
        errorCode: 'error_code',
      },
    ),
    stepDurationSeconds: histogram(
      make,
      'step_duration_seconds',
      'Seconds from claim to finalize.',
      { stepType: 'step_type', status: 'status' },
      STEP_DURATION_BUCKETS,
    ),
    messagesHandled: counter(make, 'messages_handled_total', 'Pub/Sub messages by outcome.', {
      subscription: 'subscription',
      outcome: 'outcome',
    }),
    leaseLost: counter(make, 'lease_lost_total', 'Steps whose lease was lost while running.', {
      stepType: 'step_type',
    }),
    runsAdvanced: counter(make, 'runs_advanced_total', 'Run advances that changed a run.', {
      runStatus: 'run_status',
    }),
    stepsDispatched: counter(make, 'steps_dispatched_total', 'Step-ready messages published.', {
      stepType: 'step_type',
      reason: 'reason',
    }),
    stepDeliveries: counter(make, 'step_deliveries_total', 'Step deliveries handled by workers.', {
      stepType: 'step_type',
      outcome: 'outcome',
      status: 'status',
    }),
    storeConflicts: counter(make, 'store_conflicts_total', 'Lost optimistic-concurrency rounds.', {
      stepType: 'step_type',
      phase: 'phase',
    }),
    handlerRetries: counter(make, 'handler_retries_total', 'In-process step handler retries.', {
      stepType: 'step_type',
      code: 'code',
    }),
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

interface MakeContext {
  registry: Registry;
  prefix: string;
  service: string;
}

/** camelCase API key → Prometheus label name. */
type LabelMap<L> = { readonly [K in keyof L]-?: string };

function toPromLabels<L>(service: string, map: LabelMap<L>, labels: L): Record<string, string> {
  const out: Record<string, string> = { service };
  for (const key of Object.keys(map) as Array<keyof L & string>) {
    const value: unknown = labels?.[key];
    out[map[key]] = typeof value === 'string' ? value : value === undefined ? '' : String(value);
  }
  return out;
}

function counter<L>(
  { registry, prefix, service }: MakeContext,
  name: string,
  help: string,
  map: LabelMap<L>,
): LabelledCounter<L> {
  const fullName = `${prefix}${name}`;
  const labelNames = ['service', ...Object.values<string>(map)];
  const existing = registry.getSingleMetric(fullName);
  let metric: Counter<string>;
  if (existing === undefined) {
    metric = new Counter({ name: fullName, help, labelNames, registers: [registry] });
  } else if (existing instanceof Counter) {
    metric = existing;
  } else {
    throw new Error(`metric ${fullName} is already registered with another type`);
  }
  return {
    inc(labels, value = 1) {
      if (!Number.isFinite(value) || value < 0) return;
      metric.inc(toPromLabels(service, map, labels), value);
    },
  };
}

function histogram<L>(
  { registry, prefix, service }: MakeContext,
  name: string,
  help: string,
  map: LabelMap<L>,
  buckets: readonly number[],
): LabelledHistogram<L> {
  const fullName = `${prefix}${name}`;
  const labelNames = ['service', ...Object.values<string>(map)];
  const existing = registry.getSingleMetric(fullName);
  let metric: Histogram<string>;
  if (existing === undefined) {
    metric = new Histogram({
      name: fullName,
      help,
      labelNames,
      buckets: [...buckets],
      registers: [registry],
    });
  } else if (existing instanceof Histogram) {
    metric = existing;
  } else {
    throw new Error(`metric ${fullName} is already registered with another type`);
  }
  const observe = (labels: L, value: number): void => {
    if (!Number.isFinite(value)) return;
    metric.observe(toPromLabels(service, map, labels), value);
  };
  return {
    observe,
    startTimer(labels) {
      const started = process.hrtime.bigint();
      return () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        observe(labels, seconds);
        return seconds;
      };
    },
  };
}
