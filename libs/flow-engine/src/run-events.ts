import type { FlowRun, RunStatus, StepStatus, StepType } from '@tda/contracts';
import { isTerminalRunStatus, isTerminalStepStatus } from './run-status';

/*
 * The live events of a run (seed 004 SSE), derived from its document: the difference between
 * what a client knows and the run now. What a client knows travels as the event id — a compact
 * token of the run's state after that event — so a client that reconnects with Last-Event-ID
 * gets exactly the changes it has not seen (no gap, no duplicate) from a stateless server. The
 * document keeps no history: changes a client missed while away come as one event per step for
 * its current state (with `attempt`), not every intermediate attempt.
 */

export type RunEventType =
  'run.created' | 'run.status.changed' | 'run.step.changed' | 'run.step.completed';

export interface RunEvent {
  type: RunEventType;
  data: Record<string, unknown>;
  /** The run's state token after this event (the SSE `id`). */
  state: string;
}

/** A client's view of a run: its status and each step's status and attempt. */
export interface KnownRunState {
  status?: RunStatus;
  steps: Map<string, { status: StepStatus; attempt: number }>;
}

const RUN_CODES: Readonly<Record<RunStatus, string>> = {
  PENDING: 'P',
  RUNNING: 'R',
  SUCCEEDED: 'S',
  FAILED: 'F',
  CANCELLED: 'C',
};
const STEP_CODES: Readonly<Record<StepStatus, string>> = {
  PENDING: 'P',
  READY: 'Q',
  RUNNING: 'R',
  SUCCEEDED: 'S',
  FAILED: 'F',
  SKIPPED: 'K',
  CANCELLED: 'C',
};
const invert = <T extends string>(codes: Readonly<Record<T, string>>): Map<string, T> =>
  new Map(Object.entries(codes).map(([k, v]) => [v as string, k as T]));
const RUN_BY_CODE = invert(RUN_CODES);
const STEP_BY_CODE = invert(STEP_CODES);
const TOKEN_PREFIX = 'r1.';

/**
 * Steps in creation order, then id: a step added later (dynamic steps) comes last, so a token
 * written before it still lines up with the steps it knew.
 */
export function stepOrder(run: Pick<FlowRun, 'steps'>): string[] {
  return Object.entries(run.steps)
    .sort(([a, x], [b, y]) => {
      const ca = x.createdAt ?? '';
      const cb = y.createdAt ?? '';
      return ca !== cb ? (ca < cb ? -1 : 1) : a < b ? -1 : 1;
    })
    .map(([id]) => id);
}

/** `r1.<run code><step code + attempt (base 36)>…`, `_` for what is unknown. */
export function encodeRunState(known: KnownRunState, order: readonly string[]): string {
  const steps = order.map((id) => {
    const step = known.steps.get(id);
    return step === undefined ? '_' : `${STEP_CODES[step.status]}${step.attempt.toString(36)}`;
  });
  const status = known.status === undefined ? '_' : RUN_CODES[known.status];
  return `${TOKEN_PREFIX}${status}${steps.join('')}`;
}

/** The state a token describes, against the run's step order; undefined when it is not one. */
export function decodeRunState(token: string, order: readonly string[]): KnownRunState | undefined {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 4_000) return undefined;
  const body = token.slice(TOKEN_PREFIX.length);
  const statusCode = body[0];
  if (statusCode === undefined) return undefined;
  const status = RUN_BY_CODE.get(statusCode);
  if (status === undefined && statusCode !== '_') return undefined;
  const parts = body.slice(1).match(/_|[A-Z][0-9a-z]+/g) ?? [];
  if (parts.join('') !== body.slice(1) || parts.length > order.length) return undefined;
  const steps = new Map<string, { status: StepStatus; attempt: number }>();
  for (const [i, part] of parts.entries()) {
    const id = order[i];
    if (part === '_' || id === undefined) continue;
    const stepStatus = STEP_BY_CODE.get(part[0] ?? '');
    if (stepStatus === undefined) return undefined;
    steps.set(id, { status: stepStatus, attempt: parseInt(part.slice(1), 36) });
  }
  return { ...(status === undefined ? {} : { status }), steps };
}

export interface RunEventsOptions {
  /** Emit run.created first (a run the client has never seen, created after it subscribed). */
  created?: boolean;
}

function errorText(run: FlowRun): string | undefined {
  return run.error === undefined ? undefined : `${run.error.code}: ${run.error.message}`;
}

/**
 * The events that take a client from `known` to `run`, in order: run.created, a run status that
 * is not terminal, every changed step (in step order; run.step.completed when it ended), then a
 * terminal run status. Each carries the state token after it.
 */
export function runEventsSince(
  known: KnownRunState | undefined,
  run: FlowRun,
  options: RunEventsOptions = {},
): RunEvent[] {
  const order = stepOrder(run);
  const state: KnownRunState = {
    ...(known?.status === undefined ? {} : { status: known.status }),
    steps: new Map(known?.steps ?? []),
  };
  const events: RunEvent[] = [];
  const push = (type: RunEventType, data: Record<string, unknown>): void => {
    events.push({ type, data, state: encodeRunState(state, order) });
  };
  const base = { runId: run.runId, at: run.updatedAt };
  if (options.created === true) {
    push('run.created', {
      ...base,
      flowKey: run.flowKey,
      ownerId: run.ownerId,
      symbol: run.scope.symbol,
      status: run.status,
      createdAt: run.createdAt,
    });
  }
  const statusChanged = state.status !== run.status;
  const previousStatus = state.status ?? null;
  const emitStatus = (): void => {
    state.status = run.status;
    const error = errorText(run);
    push('run.status.changed', {
      ...base,
      flowKey: run.flowKey,
      status: run.status,
      previousStatus,
      ...(error === undefined ? {} : { error }),
    });
  };
  if (statusChanged && !isTerminalRunStatus(run.status)) emitStatus();
  for (const stepId of order) {
    const step = run.steps[stepId];
    if (step === undefined) continue;
    const before = state.steps.get(stepId);
    if (before !== undefined && before.status === step.status && before.attempt === step.attempt) {
      continue;
    }
    state.steps.set(stepId, { status: step.status, attempt: step.attempt });
    const type = isTerminalStepStatus(step.status) ? 'run.step.completed' : 'run.step.changed';
    push(type, {
      ...base,
      stepId,
      stepType: step.stepType satisfies StepType,
      status: step.status,
      previousStatus: before?.status ?? null,
      attempt: step.attempt,
      ...(step.error === undefined ? {} : { error: `${step.error.code}: ${step.error.message}` }),
    });
  }
  if (statusChanged && isTerminalRunStatus(run.status)) emitStatus();
  return events;
}

/** The state a client has once it received every event of `run`. */
export function knownStateOf(run: FlowRun): KnownRunState {
  return {
    status: run.status,
    steps: new Map(
      Object.entries(run.steps).map(([id, s]) => [id, { status: s.status, attempt: s.attempt }]),
    ),
  };
}
