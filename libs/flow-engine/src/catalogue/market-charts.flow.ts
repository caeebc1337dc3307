import { scopeSchema } from './scope-schema';
import type { RunScope, Timeframe } from '@tda/contracts';
import type { FlowDefinition, StepSpecs } from './flow-definition';
import { addTimeframeCharts } from './report-steps';
import { assertKnownKeys, readOptionalNumber, readSymbol, readTimeframes, withAsOf } from './scope';

export const DEFAULT_MARKET_CHARTS_TIMEFRAMES: readonly Timeframe[] = ['1M', '1w'];
const MARKET_CHARTS_SCOPE_FIELDS = ['symbol', 'asOf', 'timeframes', 'lookback'] as const;

function resolve(scope: RunScope): RunScope {
  assertKnownKeys(scope, MARKET_CHARTS_SCOPE_FIELDS);
  const resolved: RunScope = {
    symbol: readSymbol(scope),
    timeframes: readTimeframes(scope, DEFAULT_MARKET_CHARTS_TIMEFRAMES) as RunScope['timeframes'],
  };
  const lookback = readOptionalNumber(scope, 'lookback', { min: 10, max: 1_000, integer: true });
  if (lookback !== undefined) resolved['lookback'] = lookback;
  return withAsOf(resolved, scope);
}

/**
 * A chart pack without any LLM step: OHLCV export and charts for each timeframe (default 1M and
 * 1w). `TDA_DEMO_FLOW=market_charts_v1 npm start` and the end-to-end tests of the step loop use it; the report flows
 * build on exactly the same two steps per timeframe.
 */
export const marketChartsFlow: FlowDefinition = {
  flowKey: 'market_charts_v1',
  description: 'OHLCV export and charts (candles, volume, EMA, Bollinger, RSI/MACD) per timeframe.',
  scopeSchema: scopeSchema(MARKET_CHARTS_SCOPE_FIELDS, {
    required: ['symbol'],
    timeframes: DEFAULT_MARKET_CHARTS_TIMEFRAMES,
  }),
  resolveScope: resolve,
  build(scope) {
    const resolved = resolve(scope);
    const lookback = resolved['lookback'];
    const specs: StepSpecs = {};
    for (const timeframe of resolved.timeframes ?? []) {
      addTimeframeCharts(
        specs,
        {
          symbol: resolved.symbol,
          ...(typeof lookback === 'number' ? { lookback } : {}),
        },
        timeframe,
      );
    }
    return specs;
  },
};
