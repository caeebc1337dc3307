import { createHash } from 'node:crypto';
import type { ErrorInfo, FlowRun, FlowStep, Timeframe } from '@tda/contracts';
import { errorInfo } from '../errors';
import { stepPath, type RunPatch } from '../patch';
import { checkIndicatorRequests, type IndicatorRequest } from './indicator-request';

/** How far a run may grow at run time (configurable per deployment). */
export interface ExpansionLimits {
  /** Dynamic steps (indicator steps and follow-ups) in one run. */
  maxDynamicSteps: number;
  /** Expansions in a chain: a follow-up asking again is depth 2. */
  maxDepth: number;
}

export const DEFAULT_EXPANSION_LIMITS: ExpansionLimits = { maxDynamicSteps: 12, maxDepth: 1 };

export type ExpansionDecision =
  /** Insert `added` (PENDING; the advance that follows makes them READY). */
  | { kind: 'expand'; patch: RunPatch; added: string[] }
  /** The same request was expanded already (a duplicated or replayed step event). */
  | { kind: 'noop'; reason: 'already_expanded' }
  /** Refused: INVALID_STRUCTURED_OUTPUT (not in the catalogue) or EXPANSION_LIMIT_EXCEEDED. */
  | { kind: 'refused'; error: ErrorInfo };

function canonical(requests: readonly IndicatorRequest[]): string {
  return JSON.stringify(
    requests.map((r) => ({
      timeframe: r.timeframe,
      indicators: r.indicators.map((i) => ({
        name: i.name,
        params: Object.fromEntries(Object.entries(i.params).sort(([a], [b]) => (a < b ? -1 : 1))),
      })),
    })),
  );
}

/** The run's OHLCV step per timeframe (what indicators are computed on). */
function ohlcvSteps(run: FlowRun): Map<Timeframe, string> {
  const found = new Map<Timeframe, string>();
  for (const [id, step] of Object.entries(run.steps)) {
    if (step.stepType === 'OHLCV_EXPORT' && step.timeframe !== undefined)
      found.set(step.timeframe, id);
  }
  return found;
}

function limitError(message: string, details: Record<string, unknown>): ExpansionDecision {
  return { kind: 'refused', error: errorInfo('EXPANSION_LIMIT_EXCEEDED', message, details) };
}

interface Plan {
  requesting: FlowStep;
  requests: IndicatorRequest[];
  hash: string;
  depth: number;
}

/** The checks before anything is built: the request, duplicates, the bounds. */
function plan(
  run: FlowRun,
  requestingStepId: string,
  rawRequests: unknown,
  limits: ExpansionLimits,
): Plan | ExpansionDecision {
  const requesting = run.steps[requestingStepId];
  if (requesting === undefined) {
    return {
      kind: 'refused',
      error: errorInfo('FLOW_RUN_INVALID', `no step '${requestingStepId}'`, {}),
    };
  }
  const checked = checkIndicatorRequests(rawRequests, [...ohlcvSteps(run).keys()]);
  if (!checked.ok) {
    return {
      kind: 'refused',
      error: errorInfo(
        'INVALID_STRUCTURED_OUTPUT',
        `indicator request refused: ${checked.message}`,
        {
          stepId: requestingStepId,
          ...checked.details,
        },
      ),
    };
  }
  const hash = createHash('sha256')
    .update(`expand\n${requestingStepId}\n${canonical(checked.requests)}`)
    .digest('hex')
    .slice(0, 10);
  if (run.steps[followUpId(requesting, hash)] !== undefined) {
    return { kind: 'noop', reason: 'already_expanded' };
  }
  const depth = (requesting.addedBy?.depth ?? 0) + 1;
  if (depth > limits.maxDepth) {
    return limitError(`expansion depth ${depth} is over the limit of ${limits.maxDepth}`, {
      stepId: requestingStepId,
      depth,
      maxDepth: limits.maxDepth,
    });
  }
  const existing = Object.values(run.steps).filter((s) => s.addedBy !== undefined).length;
  const adding = checked.requests.length + 1;
  if (existing + adding > limits.maxDynamicSteps) {
    return limitError(
      `the run would hold ${existing + adding} dynamic steps, over the limit of ${limits.maxDynamicSteps}`,
      {
        stepId: requestingStepId,
        dynamicSteps: existing,
        adding,
        maxDynamicSteps: limits.maxDynamicSteps,
      },
    );
  }
  return { requesting, requests: checked.requests, hash, depth };
}

function followUpId(requesting: FlowStep, hash: string): string {
  return `${requesting.stepType.toLowerCase()}:${requesting.timeframe ?? 'multi'}:followup_${hash}`;
}

/**
 * Flow 5 (seed 001): an LLM step asked for indicators; insert one INDICATORS_ON_DEMAND step per
 * requested timeframe (on that timeframe's OHLCV step) and a follow-up step of the requesting
 * type that depends on them and on the first answer, and make the requesting step's PENDING
 * dependents wait for the follow-up. Pure: ids derive from the requesting step and the request
 * (a duplicated or replayed event expands nothing twice); the graph stays acyclic; depth and
 * count are bounded; a request outside the catalogue is refused, never turned into a step.
 */
export function expandIndicatorRequests(
  run: FlowRun,
  requestingStepId: string,
  rawRequests: unknown,
  now: Date,
  limits: ExpansionLimits = DEFAULT_EXPANSION_LIMITS,
): ExpansionDecision {
  const planned = plan(run, requestingStepId, rawRequests, limits);
  if ('kind' in planned) return planned;
  const { requesting, requests, hash, depth } = planned;
  const ts = now.toISOString();
  const addedBy = { stepId: requestingStepId, depth };
  const ohlcv = ohlcvSteps(run);
  const patch: Record<string, unknown> = {};
  const indicatorIds: string[] = [];
  for (const request of requests) {
    const id = `indicators_on_demand:${request.timeframe}:req_${hash}`;
    const source = ohlcv.get(request.timeframe) ?? '';
    const step: FlowStep = {
      stepType: 'INDICATORS_ON_DEMAND',
      status: 'PENDING',
      timeframe: request.timeframe,
      dependsOn: [source],
      inputs: { timeframe: request.timeframe, indicators: request.indicators, ohlcvStepId: source },
      outputs: {},
      createdAt: ts,
      attempt: 0,
      addedBy,
    };
    patch[stepPath(id)] = step;
    indicatorIds.push(id);
  }
  const followUp = followUpId(requesting, hash);
  patch[stepPath(followUp)] = followUpStep(requestingStepId, requesting, indicatorIds, ts, addedBy);
  for (const [id, step] of Object.entries(run.steps)) {
    if (step.status !== 'PENDING' || !step.dependsOn.includes(requestingStepId)) continue;
    patch[stepPath(id, 'dependsOn')] = [...step.dependsOn, followUp];
    patch[stepPath(id, 'inputs')] = replaceReference(step.inputs, requestingStepId, followUp);
  }
  return { kind: 'expand', patch, added: [...indicatorIds, followUp] };
}

/**
 * The follow-up: the requesting step again (same type, timeframe, prompt and profile), given the
 * first answer as an earlier report and the indicator steps' values.
 */
function followUpStep(
  requestingStepId: string,
  requesting: FlowStep,
  indicatorIds: string[],
  ts: string,
  addedBy: { stepId: string; depth: number },
): FlowStep {
  const previous = requesting.inputs['previousReportStepIds'];
  return {
    stepType: requesting.stepType,
    status: 'PENDING',
    ...(requesting.timeframe === undefined ? {} : { timeframe: requesting.timeframe }),
    dependsOn: [...requesting.dependsOn, requestingStepId, ...indicatorIds],
    inputs: {
      ...requesting.inputs,
      previousReportStepIds: [
        ...(Array.isArray(previous) ? (previous as unknown[]) : []),
        requestingStepId,
      ],
      indicatorStepIds: indicatorIds,
    },
    outputs: {},
    createdAt: ts,
    attempt: 0,
    addedBy,
  };
}

/**
 * A dependent's inputs with the requesting step replaced by its follow-up, so the next report and
 * the recommendation read the answer that had the indicators (top-level stepId fields and lists).
 */
function replaceReference(
  inputs: FlowStep['inputs'],
  from: string,
  to: string,
): FlowStep['inputs'] {
  const swap = (value: unknown): unknown =>
    value === from ? to : Array.isArray(value) ? value.map((item) => swap(item)) : value;
  return Object.fromEntries(Object.entries(inputs).map(([key, value]) => [key, swap(value)]));
}
