import type { RunScope } from '@tda/contracts';
import {
  assertKnownKeys,
  FlowCatalogue,
  InvalidRequestError,
  readSymbol,
  withAsOf,
  type FlowDefinition,
  type StepSpecs,
} from '@tda/flow-engine';
import { NOOP_INPUTS } from './noop-step';

export const CHAIN_FLOW_KEY = 'bench_chain_v1';
export const FANOUT_FLOW_KEY = 'bench_fanout_v1';
const MAX_STEPS = 200;

/** scope[field]: an integer in [1, MAX_STEPS]. */
function readCount(scope: RunScope, field: string): number {
  const value = scope[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_STEPS) {
    throw new InvalidRequestError(`scope.${field} must be an integer from 1 to ${MAX_STEPS}`, {
      field: `scope.${field}`,
    });
  }
  return value;
}

const stepId = (index: number): string => `noop_${String(index).padStart(3, '0')}`;

/**
 * A bench flow of no-op steps. Its market data need (BTC-USDT 1h) only lets the trigger resolve
 * asOf as for any flow; no step reads it.
 */
function noopFlow(
  flowKey: string,
  field: 'length' | 'width',
  description: string,
  build: (count: number) => StepSpecs,
): FlowDefinition {
  const resolveScope = (scope: RunScope): RunScope => {
    assertKnownKeys(scope, ['symbol', 'asOf', field]);
    return withAsOf({ symbol: readSymbol(scope), [field]: readCount(scope, field) }, scope);
  };
  return {
    flowKey,
    description,
    scopeSchema: {
      type: 'object',
      properties: {
        symbol: { type: 'string' },
        asOf: { type: 'string', format: 'date-time' },
        [field]: { type: 'integer', minimum: 1, maximum: MAX_STEPS },
      },
      required: ['symbol', field],
      additionalProperties: false,
    },
    resolveScope,
    needs: (scope) => ({ marketData: [{ symbol: scope.symbol, timeframe: '1h' }] }),
    build: (scope) => build(readCount(resolveScope(scope), field)),
  };
}

/** `length` no-op steps, each depending on the one before. */
function chain(length: number): StepSpecs {
  const steps: StepSpecs = {};
  for (let i = 1; i <= length; i += 1) {
    steps[stepId(i)] = {
      stepType: 'ACCOUNT_EXPORT',
      dependsOn: i === 1 ? [] : [stepId(i - 1)],
      inputs: NOOP_INPUTS,
    };
  }
  return steps;
}

/** `width` parallel no-op steps and a join that depends on all of them. */
function fanout(width: number): StepSpecs {
  const steps: StepSpecs = {};
  for (let i = 1; i <= width; i += 1) {
    steps[stepId(i)] = { stepType: 'ACCOUNT_EXPORT', dependsOn: [], inputs: NOOP_INPUTS };
  }
  steps['join'] = {
    stepType: 'ACCOUNT_EXPORT',
    dependsOn: Object.keys(steps),
    inputs: NOOP_INPUTS,
  };
  return steps;
}

/** The orchestrator's catalogue in the platform bench: only the no-op flows. */
export function noopCatalogue(): FlowCatalogue {
  return new FlowCatalogue([
    noopFlow(CHAIN_FLOW_KEY, 'length', 'bench: a chain of `length` no-op steps', chain),
    noopFlow(FANOUT_FLOW_KEY, 'width', 'bench: `width` parallel no-op steps and a join', fanout),
  ]);
}
