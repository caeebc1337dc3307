import type {
  ChartRequestInput,
  LlmProfile,
  LlmReportInputs,
  RunScope,
  Timeframe,
} from '@tda/contracts';
import { buildStepId, modelVariant } from '../ids';
import type { StepSpecs } from './flow-definition';
import { readAsOf, readModelName, readOptionalNumber, readSymbol } from './scope';

/** Defaults of the report flows; a change that alters the built steps needs a new flowKey. */
export const DEFAULT_CHART_TEMPLATE_ID = 'ctpl_default_v1';
export const DEFAULT_CHART_REQUESTS: readonly [ChartRequestInput, ...ChartRequestInput[]] = [
  { chartTemplateId: DEFAULT_CHART_TEMPLATE_ID, kind: 'candlestick' },
];
export const DEFAULT_MIN_IMAGES = 1;
const [firstRequest, ...otherRequests] = DEFAULT_CHART_REQUESTS;
/** Bars of history per timeframe: about five years of months, two of weeks, half a year of days... */
export const DEFAULT_LOOKBACK: Readonly<Record<Timeframe, number>> = {
  '1M': 60,
  '1w': 104,
  '1d': 180,
  '4h': 180,
  '1h': 168,
};
export const LLM_REPORT_OUTPUT_SCHEMA_ID = 'llm_report_output_v1';
export const DEFAULT_TEMPERATURE = 0.2;
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

/** Scope fields shared by the report flows. */
export const REPORT_SCOPE_FIELDS = [
  'symbol',
  'asOf',
  'timeframes',
  'modelName',
  'temperature',
  'maxOutputTokens',
  'lookback',
] as const;

export interface ReportSettings {
  symbol: string;
  /** scope.asOf, normalized; absent until the orchestrator fills the default at trigger. */
  asOf?: string;
  modelName: string;
  temperature?: number;
  maxOutputTokens?: number;
  /** One lookback (bars) for every timeframe instead of DEFAULT_LOOKBACK. */
  lookback?: number;
}

export function readReportSettings(scope: RunScope): ReportSettings {
  const settings: ReportSettings = { symbol: readSymbol(scope), modelName: readModelName(scope) };
  const asOf = readAsOf(scope);
  if (asOf !== undefined) settings.asOf = asOf;
  const temperature = readOptionalNumber(scope, 'temperature', { min: 0, max: 2, integer: false });
  const maxOutputTokens = readOptionalNumber(scope, 'maxOutputTokens', {
    min: 1,
    max: 65_536,
    integer: true,
  });
  const lookback = readOptionalNumber(scope, 'lookback', { min: 10, max: 1_000, integer: true });
  if (temperature !== undefined) settings.temperature = temperature;
  if (maxOutputTokens !== undefined) settings.maxOutputTokens = maxOutputTokens;
  if (lookback !== undefined) settings.lookback = lookback;
  return settings;
}

/** The resolved scope stored on the run: every default made explicit except the optional knobs. */
export function reportScope(settings: ReportSettings, timeframes: Timeframe[]): RunScope {
  const scope: RunScope = { ...settings, timeframes: timeframes as RunScope['timeframes'] };
  return scope;
}

/**
 * The effective LLM request profile (seed 002: authoritative, no worker-side overrides): single
 * candidate, JSON output validated against the llm_report_output_v1 schema.
 */
export function llmReportProfile(
  settings: ReportSettings,
  schemaId: string = LLM_REPORT_OUTPUT_SCHEMA_ID,
): LlmProfile {
  return {
    modelName: settings.modelName,
    temperature: settings.temperature ?? DEFAULT_TEMPERATURE,
    maxOutputTokens: settings.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    candidateCount: 1,
    responseMimeType: 'application/json',
    structuredOutput: { schemaId },
  };
}

export interface TimeframeReportSteps {
  ohlcvStepId: string;
  chartsStepId: string;
  reportStepId: string;
}

export interface TimeframeChartSteps {
  ohlcvStepId: string;
  chartsStepId: string;
}

/** Adds the OHLCV -> charts chain of one timeframe to `specs` (shared by every flow with charts). */
export function addTimeframeCharts(
  specs: StepSpecs,
  settings: Pick<ReportSettings, 'symbol' | 'lookback'>,
  timeframe: Timeframe,
): TimeframeChartSteps {
  const ohlcvStepId = buildStepId({ stepType: 'OHLCV_EXPORT', timeframe });
  const chartsStepId = buildStepId({
    stepType: 'CHART_EXPORT',
    timeframe,
    variant: [DEFAULT_CHART_TEMPLATE_ID],
  });
  specs[ohlcvStepId] = {
    stepType: 'OHLCV_EXPORT',
    timeframe,
    dependsOn: [],
    inputs: {
      symbol: settings.symbol,
      timeframe,
      lookback: settings.lookback ?? DEFAULT_LOOKBACK[timeframe],
    },
  };
  specs[chartsStepId] = {
    stepType: 'CHART_EXPORT',
    timeframe,
    dependsOn: [ohlcvStepId],
    inputs: {
      ohlcvStepId,
      chartTemplateId: DEFAULT_CHART_TEMPLATE_ID,
      minImages: DEFAULT_MIN_IMAGES,
      requests: [{ ...firstRequest }, ...otherRequests.map((r) => ({ ...r }))],
    },
  };
  return { ohlcvStepId, chartsStepId };
}

/**
 * Adds the OHLCV -> charts -> LLM report chain of one timeframe to `specs`. The report depends on
 * its OHLCV and charts steps and on every previous report it reads (seed 002 inputs).
 */
export function addTimeframeReport(
  specs: StepSpecs,
  settings: ReportSettings,
  timeframe: Timeframe,
  promptId: string,
  previousReportStepIds: readonly string[] = [],
  outputSchemaId: string = LLM_REPORT_OUTPUT_SCHEMA_ID,
): TimeframeReportSteps {
  const { ohlcvStepId, chartsStepId } = addTimeframeCharts(specs, settings, timeframe);
  const reportStepId = buildStepId({
    stepType: 'LLM_REPORT',
    timeframe,
    variant: [promptId, modelVariant(settings.modelName)],
  });
  const reportInputs: LlmReportInputs = {
    ohlcvStepId,
    chartsManifestStepId: chartsStepId,
    llm: { promptId, llmProfile: { ...llmReportProfile(settings, outputSchemaId) } },
  };
  if (previousReportStepIds.length > 0) {
    reportInputs.previousReportStepIds = [...previousReportStepIds];
  }
  specs[reportStepId] = {
    stepType: 'LLM_REPORT',
    timeframe,
    dependsOn: [ohlcvStepId, chartsStepId, ...previousReportStepIds],
    inputs: reportInputs,
  };
  return { ohlcvStepId, chartsStepId, reportStepId };
}
