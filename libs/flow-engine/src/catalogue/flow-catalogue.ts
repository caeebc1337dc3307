import type { ScopeSchema } from './scope-schema';
import {
  FLOW_KEY_PATTERN,
  validate,
  type FlowRun,
  type FlowStep,
  type RunScope,
  type RunTrigger,
} from '@tda/contracts';
import { validateRunGraph } from '../dag';
import { DEFAULT_EXPANSION_LIMITS, type ExpansionLimits } from '../dynamic/expand-indicators';
import { FlowRunInvalidError, InvalidRequestError, UnknownFlowKeyError } from '../errors';
import { generateRunId, type RandomSource } from '../ids';
import { computeProgress } from '../run-status';
import { addMs, toTimestamp } from '../time';
import type { FlowDefinition, FlowNeeds, StepSpecs } from './flow-definition';
import { marketDataNeeds } from './market-data-needs';
import { aggregatedReportFlow } from './aggregated-report.flow';
import { backtestFlow } from './backtest.flow';
import { marketChartsFlow } from './market-charts.flow';
import { recommendationWithAccountFlow } from './recommendation-with-account.flow';
import { recommendationWithIndicatorsFlow } from './recommendation-with-indicators.flow';
import { recommendationWithNewsFlow } from './recommendation-with-news.flow';
import { scheduledMonthWeekReportFlow } from './scheduled-month-week-report.flow';
import { userMultiTfReportFlow } from './user-multi-tf-report.flow';

export const FLOW_RUN_SCHEMA_VERSION = 1;
/** A run may be given at most a week; longer work is a schedule of runs, not one run. */
export const MAX_DEADLINE_SECONDS = 7 * 24 * 60 * 60;
const TRIGGER_TYPES = [
  'SCHEDULER',
  'USER',
  'SYSTEM',
  'DEBUG_HTTP',
] as const satisfies readonly RunTrigger['type'][];

/** A trigger request checked and resolved by the flow, before anything external is read. */
export interface FlowPlan {
  flowKey: string;
  /** The resolved scope (defaults made explicit) without the fields the trigger resolves. */
  scope: RunScope;
  needs: FlowNeeds;
}

const CHECK_CONTEXT = { runId: '20000101-000000_CHECK_chk', createdAt: '2000-01-01T00:00:00.000Z' };

/** The default needs: the market data of the built OHLCV steps and the scope's account. */
function defaultNeeds(definition: FlowDefinition, scope: RunScope): FlowNeeds {
  const steps = definition.build(scope, CHECK_CONTEXT);
  const marketData = marketDataNeeds({
    scope,
    steps: Object.fromEntries(
      Object.entries(steps).map(([id, spec]) => [id, { ...spec, status: 'PENDING' as const }]),
    ) as FlowRun['steps'],
  });
  const accountId = scope['accountId'];
  return typeof accountId === 'string' ? { marketData, accountId } : { marketData };
}

export interface FlowSummary {
  flowKey: string;
  description: string;
  scopeSchema: ScopeSchema;
}

export interface CreateRunInput {
  flowKey: string;
  scope: RunScope;
  ownerId: string;
  trigger: RunTrigger;
  idempotencyKey?: string;
  /** Run timeout: deadlineAt = now + deadlineSeconds (advance fails the run with RUN_TIMEOUT). */
  deadlineSeconds?: number;
  /** Flow 5: the bounds a run of a flow with dynamic steps is created with (default 12 / 1). */
  expansionLimits?: ExpansionLimits;
  now: Date;
  /** For the runId suffix. */
  random: RandomSource;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkText(field: string, value: unknown, optional = false): void {
  if (optional && value === undefined) return;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
    throw new InvalidRequestError(`${field} must be a non-blank string of at most 200 characters`, {
      field,
    });
  }
}

/**
 * Validates a definition by building it for `scope`: the resolved scope must be accepted and the
 * built graph must pass validateRunGraph. Returns the built steps. Throws like createRun.
 */
export function validateFlowDefinition(
  definition: FlowDefinition,
  scope: RunScope,
  ctx = CHECK_CONTEXT,
): StepSpecs {
  if (!FLOW_KEY_PATTERN.test(definition.flowKey)) {
    throw new FlowRunInvalidError(`flowKey '${definition.flowKey}' does not match *_v<N>`, {
      flowKey: definition.flowKey,
    });
  }
  const specs = definition.build(definition.resolveScope(scope), ctx);
  validateRunGraph(specs);
  return specs;
}

/** The flow catalogue (DESIGN §5.1): flowKey -> definition, and the run factory. */
export class FlowCatalogue {
  private readonly flows: ReadonlyMap<string, FlowDefinition>;

  constructor(definitions: readonly FlowDefinition[]) {
    const flows = new Map<string, FlowDefinition>();
    for (const definition of definitions) {
      if (!FLOW_KEY_PATTERN.test(definition.flowKey)) {
        throw new FlowRunInvalidError(`flowKey '${definition.flowKey}' does not match *_v<N>`, {
          flowKey: definition.flowKey,
        });
      }
      if (flows.has(definition.flowKey)) {
        throw new FlowRunInvalidError(`flowKey '${definition.flowKey}' is registered twice`, {
          flowKey: definition.flowKey,
        });
      }
      flows.set(definition.flowKey, definition);
    }
    this.flows = flows;
  }

  keys(): string[] {
    return [...this.flows.keys()].sort();
  }

  list(): FlowSummary[] {
    return this.keys().flatMap((flowKey) => {
      const flow = this.flows.get(flowKey);
      return flow === undefined
        ? []
        : [{ flowKey, description: flow.description, scopeSchema: flow.scopeSchema }];
    });
  }

  find(flowKey: string): FlowDefinition | undefined {
    return this.flows.get(flowKey);
  }

  /** Throws UnknownFlowKeyError (INVALID_REQUEST) naming the available flow keys. */
  get(flowKey: string): FlowDefinition {
    const flow = this.flows.get(flowKey);
    if (flow === undefined) {
      throw new UnknownFlowKeyError(
        `unknown flowKey '${flowKey}'; available: ${this.keys().join(', ')}`,
        { flowKey, availableFlowKeys: this.keys() },
      );
    }
    return flow;
  }

  /**
   * Checks a trigger's flowKey and scope (InvalidRequestError, nothing built for good) and says
   * what the trigger must resolve before createRun: market data for asOf, account, reports.
   */
  plan(flowKey: string, scope: RunScope): FlowPlan {
    const flow = this.get(flowKey);
    if (!isObject(scope)) {
      throw new InvalidRequestError('scope must be an object', { field: 'scope' });
    }
    const resolved = flow.resolveScope(scope);
    const needs = flow.needs?.(resolved) ?? defaultNeeds(flow, resolved);
    return { flowKey: flow.flowKey, scope: resolved, needs };
  }

  /**
   * A complete new FlowRun document: schemaVersion 1, status PENDING, every step PENDING with
   * attempt 0 and empty outputs, createdAt = updatedAt = now, progress counted, resolved scope.
   * Caller errors throw InvalidRequestError; a catalogue bug (invalid graph, a document that
   * fails the flow_run contract) throws FlowRunInvalidError. The caller creates it create-only
   * and then advances it.
   */
  createRun(input: CreateRunInput): FlowRun {
    const flow = this.get(input.flowKey);
    checkCreateInput(input);
    const scope = flow.resolveScope(input.scope);
    const createdAt = toTimestamp(input.now);
    const runId = generateRunId({
      createdAt: input.now,
      symbol: scope.symbol,
      random: input.random,
    });
    const specs = flow.build(scope, { runId, createdAt });
    validateRunGraph(specs);
    const run: FlowRun = {
      schemaVersion: FLOW_RUN_SCHEMA_VERSION,
      runId,
      flowKey: flow.flowKey,
      status: 'PENDING',
      createdAt,
      updatedAt: createdAt,
      trigger: { ...input.trigger },
      scope: structuredClone(scope),
      ownerId: input.ownerId,
      steps: pendingSteps(specs, createdAt),
    };
    if (input.idempotencyKey !== undefined) run.idempotencyKey = input.idempotencyKey;
    if (input.deadlineSeconds !== undefined) {
      run.deadlineAt = addMs(input.now, input.deadlineSeconds * 1000);
    }
    if (flow.dynamicSteps === true) {
      run.expansionLimits = { ...(input.expansionLimits ?? DEFAULT_EXPANSION_LIMITS) };
    }
    run.progress = computeProgress(run);
    const checked = validate.flowRun(run);
    if (!checked.ok) {
      throw new FlowRunInvalidError(`flow ${flow.flowKey} built a run that violates the contract`, {
        flowKey: flow.flowKey,
        issues: checked.issues,
      });
    }
    return run;
  }
}

/** The caller-given fields of a run (owner, key, trigger, deadline, scope shape); throws 400s. */
function checkCreateInput(input: CreateRunInput): void {
  checkText('ownerId', input.ownerId);
  checkText('idempotencyKey', input.idempotencyKey, true);
  if (
    !isObject(input.trigger) ||
    !(TRIGGER_TYPES as readonly unknown[]).includes(input.trigger.type)
  ) {
    throw new InvalidRequestError(`trigger.type must be one of ${TRIGGER_TYPES.join(', ')}`, {
      field: 'trigger.type',
      allowed: [...TRIGGER_TYPES],
    });
  }
  checkText('trigger.source', input.trigger.source);
  const { deadlineSeconds } = input;
  if (
    deadlineSeconds !== undefined &&
    (!Number.isInteger(deadlineSeconds) ||
      deadlineSeconds < 1 ||
      deadlineSeconds > MAX_DEADLINE_SECONDS)
  ) {
    throw new InvalidRequestError(
      `deadlineSeconds must be an integer in 1..${MAX_DEADLINE_SECONDS}`,
      { field: 'deadlineSeconds', max: MAX_DEADLINE_SECONDS },
    );
  }
  if (!isObject(input.scope)) {
    throw new InvalidRequestError('scope must be an object', { field: 'scope' });
  }
}

/** The built step specs as PENDING steps, in stepId order. */
function pendingSteps(specs: StepSpecs, createdAt: string): Record<string, FlowStep> {
  const steps: Record<string, FlowStep> = {};
  for (const stepId of Object.keys(specs).sort()) {
    const spec = specs[stepId];
    if (spec === undefined) continue;
    const step: FlowStep = {
      stepType: spec.stepType,
      status: 'PENDING',
      dependsOn: [...spec.dependsOn],
      inputs: structuredClone({ ...spec.inputs }),
      outputs: {},
      createdAt,
      attempt: 0,
    };
    if (spec.timeframe !== undefined) step.timeframe = spec.timeframe;
    steps[stepId] = step;
  }
  return steps;
}

/** The flows this deployment offers. */
export const flowCatalogue = new FlowCatalogue([
  scheduledMonthWeekReportFlow,
  userMultiTfReportFlow,
  marketChartsFlow,
  recommendationWithAccountFlow,
  aggregatedReportFlow,
  recommendationWithIndicatorsFlow,
  recommendationWithNewsFlow,
  backtestFlow,
]);

export function getFlow(flowKey: string): FlowDefinition {
  return flowCatalogue.get(flowKey);
}

export function listFlows(): FlowSummary[] {
  return flowCatalogue.list();
}

export function createRun(input: CreateRunInput): FlowRun {
  return flowCatalogue.createRun(input);
}
