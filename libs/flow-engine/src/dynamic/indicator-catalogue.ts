/**
 * The indicators an LLM step may ask for (flow 5), with bounded parameters: the catalogue the
 * prompt lists and the orchestrator checks a request against. Data only; the indicator worker
 * computes them with the library the charts use.
 */
export interface IndicatorParam {
  min: number;
  max: number;
  default: number;
  integer: boolean;
}

export interface IndicatorDefinition {
  description: string;
  params: Readonly<Record<string, IndicatorParam>>;
  /** A rule across parameters (MACD: fast < slow), as a message when broken. */
  check?(params: Readonly<Record<string, number>>): string | undefined;
  /** That rule in words, for the prompt. */
  rule?: string;
}

const period = (fallback: number, max = 200, min = 2): IndicatorParam => ({
  min,
  max,
  default: fallback,
  integer: true,
});

export const INDICATOR_CATALOGUE: Readonly<Record<string, IndicatorDefinition>> = {
  RSI: { description: 'Relative Strength Index', params: { period: period(14, 100) } },
  MACD: {
    description: 'Moving Average Convergence Divergence',
    params: { fast: period(12, 50), slow: period(26, 100, 3), signal: period(9, 50) },
    check: (p) => ((p['fast'] ?? 0) < (p['slow'] ?? 0) ? undefined : 'fast must be below slow'),
    rule: 'fast below slow',
  },
  ATR: { description: 'Average True Range', params: { period: period(14, 100) } },
  BOLLINGER: {
    description: 'Bollinger Bands',
    params: {
      period: period(20, 100, 5),
      stdDev: { min: 1, max: 4, default: 2, integer: false },
    },
  },
  EMA: { description: 'Exponential Moving Average', params: { period: period(20, 400) } },
  SMA: { description: 'Simple Moving Average', params: { period: period(50, 400) } },
  STOCHASTIC: {
    description: 'Stochastic oscillator',
    params: { k: period(14, 50, 3), d: period(3, 20) },
  },
  ADX: { description: 'Average Directional Index', params: { period: period(14, 100) } },
  OBV: { description: 'On-Balance Volume', params: {} },
  VWAP: { description: 'Volume-Weighted Average Price', params: {} },
};

export const INDICATOR_NAMES: readonly string[] = Object.keys(INDICATOR_CATALOGUE);
/** Indicators in one request, and requests (timeframes) in one step's output. */
export const MAX_INDICATORS_PER_REQUEST = 8;
export const MAX_REQUESTS_PER_STEP = 3;

function describeParam(key: string, p: IndicatorParam): string {
  return `${key} ${p.integer ? 'integer' : 'number'} ${p.min}..${p.max} (default ${p.default})`;
}

/**
 * The catalogue as the prompt lists it (one line per indicator, then the run's timeframes): the
 * same table the orchestrator checks a request against, so prompt and check cannot drift.
 */
export function describeIndicatorCatalogue(timeframes: readonly string[]): string[] {
  const lines = Object.entries(INDICATOR_CATALOGUE).map(([name, definition]) => {
    const params = Object.entries(definition.params).map(([key, p]) => describeParam(key, p));
    const rule = definition.rule === undefined ? '' : `; ${definition.rule}`;
    return `${name} (${definition.description}): ${params.length === 0 ? 'no parameters' : params.join(', ')}${rule}`;
  });
  return [
    ...lines,
    `timeframe: one of ${timeframes.join(', ')}; at most ${MAX_REQUESTS_PER_STEP} timeframes and ${MAX_INDICATORS_PER_REQUEST} indicators each`,
  ];
}
