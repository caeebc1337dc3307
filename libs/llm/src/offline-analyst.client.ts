import { createHash } from 'node:crypto';
import { validate } from '@tda/contracts';
import { LlmCallError, type LlmClient, type LlmRequest, type LlmResponse } from './llm-client.port';
import { buildOfflineAggregate } from './offline-aggregate';
import { analyseCandles, studiesOfManifest } from './offline-analysis';
import { buildOfflineReport, type HigherTimeframeView } from './offline-report';
import {
  offlineIndicatorRequest,
  requestedIndicatorReadings,
  withRequestedIndicators,
} from './offline-requested-indicators';

export const OFFLINE_MODEL_VERSION = 'offline-analyst-v1';

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Reads the higher-timeframe view from an llm_report_file, tolerating missing fields. */
function higherTimeframeView(report: unknown): HigherTimeframeView | undefined {
  const file = asObject(report);
  const timeframe = str(asObject(file?.['metadata'])?.['timeframe']);
  const details = asObject(asObject(file?.['output'])?.['details']);
  if (timeframe === undefined || details === undefined) return undefined;
  const view: HigherTimeframeView = { timeframe };
  const direction = str(asObject(details['trend'])?.['direction']);
  const bias = str(asObject(details['outlook'])?.['bias']);
  if (direction !== undefined) view.direction = direction;
  if (bias !== undefined) view.bias = bias;
  return view;
}

function chartsOf(manifest: unknown): { chartTemplateId: string; kind?: string }[] {
  const items = asObject(manifest)?.['items'];
  if (!Array.isArray(items)) return [];
  const charts: { chartTemplateId: string; kind?: string }[] = [];
  for (const item of items) {
    const id = str(asObject(item)?.['chartTemplateId']);
    if (id === undefined) continue;
    const kind = str(asObject(item)?.['kind']);
    charts.push(kind === undefined ? { chartTemplateId: id } : { chartTemplateId: id, kind });
  }
  return charts;
}

/**
 * Keeps the output inside the shape a response schema allows where that is mechanical: drops
 * properties an `additionalProperties: false` object does not declare and trims arrays to
 * `maxItems`. The report itself is always the llm_report_output_v1 shape; a schema that wants
 * something else is not satisfiable offline, and the pipeline's validation says so.
 */
export function conformToSchema(value: unknown, schema: unknown): unknown {
  const s = asObject(schema);
  if (s === undefined) return value;
  if (Array.isArray(value)) {
    const max = typeof s['maxItems'] === 'number' ? s['maxItems'] : value.length;
    return value.slice(0, max).map((item) => conformToSchema(item, s['items']));
  }
  const object = asObject(value);
  if (object === undefined) return value;
  const properties = asObject(s['properties']) ?? {};
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(object)) {
    if (key in properties) out[key] = conformToSchema(child, properties[key]);
    else if (s['additionalProperties'] !== false) out[key] = child;
  }
  return out;
}

/**
 * The deterministic offline analyst (provider 'offline'): used when no Gemini key or Vertex
 * project is configured. It computes a technical-analysis report from request.context (the
 * parsed ohlcv_export, the charts manifest, previous reports of the run) instead of calling a
 * model, and answers like a provider would: the report JSON as candidates[0].parts[0].text,
 * finishReason STOP, zero token usage, modelVersion offline-analyst-v1. An aggregated report
 * (request.context.aggregate, flow 3) is synthesised from its input reports instead. The same
 * request always gives the same bytes; a repair call (attempt 2) gets the same answer.
 */
export class OfflineAnalystClient implements LlmClient {
  readonly provider = 'offline' as const;

  async generate(request: LlmRequest): Promise<LlmResponse> {
    const context = request.context;
    if (context?.aggregate !== undefined) {
      return answer(request, buildOfflineAggregate(context.symbol, context.aggregate));
    }
    const ohlcv = validate.ohlcvExport(context?.ohlcv);
    if (context === undefined || !ohlcv.ok) {
      throw new LlmCallError(
        'LLM_PROFILE_INVALID',
        'the offline analyst needs request.context.ohlcv (a valid ohlcv_export artifact)',
        false,
        ohlcv.ok
          ? {}
          : { issues: ohlcv.issues.slice(0, 5).map((i) => ({ path: i.path, keyword: i.keyword })) },
      );
    }
    const timeframe = context.timeframe ?? ohlcv.value.timeframe;
    const higherTimeframes = (context.previousReports ?? [])
      .map(higherTimeframeView)
      // A flow 5 follow-up also reads its own first answer (same timeframe): not a context view.
      .filter(
        (view): view is HigherTimeframeView => view !== undefined && view.timeframe !== timeframe,
      );
    const complete = ohlcv.value.candles.filter((c) => c.complete !== false);
    if (complete.length === 0) {
      throw new LlmCallError(
        'LLM_PROFILE_INVALID',
        'the offline analyst needs at least one complete candle',
        false,
      );
    }
    const analysis = analyseCandles(ohlcv.value.candles, studiesOfManifest(context.chartsManifest));
    const report = buildOfflineReport({
      symbol: context.symbol,
      timeframe,
      // The indicators of the run's charts (manifest requests and params), none of its own.
      analysis,
      charts: chartsOf(context.chartsManifest),
      higherTimeframes,
    });
    // Flow 5: a follow-up reads the values it asked for; a first report that may ask, asks.
    const readings = requestedIndicatorReadings(context.indicatorValues ?? [], analysis.last.close);
    if (readings.length > 0) return answer(request, withRequestedIndicators(report, readings));
    if (context.mayRequestIndicators === true) {
      return answer(request, { ...report, indicatorRequests: offlineIndicatorRequest(timeframe) });
    }
    return answer(request, report);
  }
}

/** The output as a provider answer, kept inside the request's response schema where mechanical. */
function answer(request: LlmRequest, report: unknown): LlmResponse {
  const schema = request.generationConfig.responseJsonSchema;
  const output = schema === undefined ? report : conformToSchema(report, schema);
  const text = JSON.stringify(output);
  return {
    candidates: [{ finishReason: 'STOP', parts: [{ text }] }],
    text,
    // No model ran, so no token counts: zeros would read as a measured (free) model call.
    modelVersion: OFFLINE_MODEL_VERSION,
    responseId: `offline-${createHash('sha256').update(text).digest('hex').slice(0, 24)}`,
  };
}
