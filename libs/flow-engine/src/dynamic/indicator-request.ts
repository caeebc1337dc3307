import {
  TIMEFRAMES,
  type IndicatorRequest,
  type IndicatorSpec,
  type Timeframe,
} from '@tda/contracts';
import {
  INDICATOR_CATALOGUE,
  INDICATOR_NAMES,
  MAX_INDICATORS_PER_REQUEST,
  MAX_REQUESTS_PER_STEP,
} from './indicator-catalogue';

/** Checked requests: IndicatorRequest / IndicatorSpec of flow_run.schema.json (defaults filled). */
export type { IndicatorRequest, IndicatorSpec };

export type RequestCheck =
  | { ok: true; requests: IndicatorRequest[] }
  | { ok: false; message: string; details: Record<string, unknown> };

const refuse = (message: string, details: Record<string, unknown> = {}): RequestCheck => ({
  ok: false,
  message,
  details,
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One indicator of a request, its parameters checked against the catalogue and defaults filled. */
function readIndicator(raw: unknown, at: string): IndicatorSpec | RequestCheck {
  if (!isRecord(raw) || typeof raw['name'] !== 'string') return refuse(`${at}.name is missing`);
  const name = raw['name'].toUpperCase();
  const definition = INDICATOR_CATALOGUE[name];
  if (definition === undefined) {
    return refuse(`${at}: unknown indicator`, {
      indicator: raw['name'].slice(0, 40),
      allowed: INDICATOR_NAMES,
    });
  }
  const given = raw['params'] === undefined ? {} : raw['params'];
  if (!isRecord(given)) return refuse(`${at}.params must be an object`);
  const unknown = Object.keys(given).filter((k) => definition.params[k] === undefined);
  if (unknown.length > 0) {
    return refuse(`${at}: unknown parameter(s) of ${name}`, {
      indicator: name,
      unknown: unknown.map((k) => k.slice(0, 40)),
      allowed: Object.keys(definition.params),
    });
  }
  const params: Record<string, number> = {};
  for (const [key, bounds] of Object.entries(definition.params)) {
    const value = given[key] ?? bounds.default;
    const valid =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= bounds.min &&
      value <= bounds.max &&
      (!bounds.integer || Number.isInteger(value));
    if (!valid) {
      return refuse(
        `${at}: ${name}.${key} must be ${bounds.integer ? 'an integer' : 'a number'} in ${bounds.min}..${bounds.max}`,
        {
          indicator: name,
          param: key,
          min: bounds.min,
          max: bounds.max,
        },
      );
    }
    params[key] = value;
  }
  const broken = definition.check?.(params);
  if (broken !== undefined) return refuse(`${at}: ${name}: ${broken}`, { indicator: name });
  return { name, params };
}

/**
 * A model's indicator request (untrusted structured output) → checked, normalized requests:
 * known indicators, parameters within bounds (defaults filled), a timeframe the run has, at most
 * MAX_REQUESTS_PER_STEP timeframes and MAX_INDICATORS_PER_REQUEST indicators each, no
 * duplicates. Any violation refuses the whole request with a sanitized message.
 */
export function checkIndicatorRequests(
  raw: unknown,
  runTimeframes: readonly Timeframe[],
): RequestCheck {
  if (!Array.isArray(raw) || raw.length === 0)
    return refuse('indicator requests must be a non-empty array');
  if (raw.length > MAX_REQUESTS_PER_STEP) {
    return refuse(`at most ${MAX_REQUESTS_PER_STEP} indicator requests per step`, {
      max: MAX_REQUESTS_PER_STEP,
    });
  }
  const requests: IndicatorRequest[] = [];
  for (const [i, entry] of raw.entries()) {
    const at = `requests[${i}]`;
    if (!isRecord(entry)) return refuse(`${at} must be an object`);
    const timeframe = entry['timeframe'];
    if (typeof timeframe !== 'string' || !(TIMEFRAMES as readonly string[]).includes(timeframe)) {
      return refuse(`${at}.timeframe is not a timeframe`, { allowed: [...TIMEFRAMES] });
    }
    if (!runTimeframes.includes(timeframe as Timeframe)) {
      return refuse(`${at}.timeframe ${timeframe} is not one of the run's`, {
        timeframe,
        runTimeframes: [...runTimeframes],
      });
    }
    if (requests.some((r) => r.timeframe === timeframe))
      return refuse(`${at}: timeframe ${timeframe} twice`);
    const list = entry['indicators'];
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_INDICATORS_PER_REQUEST) {
      return refuse(`${at}.indicators must hold 1..${MAX_INDICATORS_PER_REQUEST} indicators`);
    }
    const indicators: IndicatorSpec[] = [];
    for (const [j, item] of list.entries()) {
      const read = readIndicator(item, `${at}.indicators[${j}]`);
      if ('ok' in read) return read;
      if (indicators.some((x) => JSON.stringify(x) === JSON.stringify(read))) continue;
      indicators.push(read);
    }
    const [first, ...rest] = indicators;
    if (first === undefined) return refuse(`${at}.indicators is empty`);
    requests.push({ timeframe: timeframe as Timeframe, indicators: [first, ...rest] });
  }
  return { ok: true, requests };
}
