import type { LlmPrompt } from '@tda/contracts';
import type { LlmPart, LlmStructuredContext } from './llm-client.port';
import { type ContextArtifactKind, ContextInputError, ContextLimitError } from './llm.errors';

/** seed 002 hard limits (bytes). */
export const MAX_CONTEXT_BYTES_PER_JSON_ARTIFACT = 64 * 1024;
export const MAX_CHART_IMAGE_BYTES = 256 * 1024;
/** Chart descriptions are one line each in UserInput (the manifest allows 500 characters). */
const MAX_DESCRIPTION_CHARS = 500;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const TIMEFRAME_NAMES: Readonly<Record<string, string>> = {
  '1M': 'monthly',
  '1w': 'weekly',
  '1d': 'daily',
  '4h': '4-hour',
  '1h': 'hourly',
};

/** A JSON artifact as downloaded: its URI and its exact bytes (or text). */
export interface JsonContextArtifact {
  uri: string;
  json: string | Uint8Array;
}

export interface ChartContextImage {
  uri: string;
  png: Uint8Array;
  /** The chart's description, copied from the charts manifest item. */
  description: string;
  chartTemplateId?: string;
}

export interface PreviousReportContext extends JsonContextArtifact {
  stepId: string;
}

export interface PromptAssemblyInput {
  prompt: LlmPrompt;
  identity: { runId: string; stepId: string; symbol: string; timeframe: string };
  context: {
    ohlcv: JsonContextArtifact;
    chartsManifest: JsonContextArtifact;
    /** In charts-manifest order. */
    charts: readonly ChartContextImage[];
    /** In step order (inputs.previousReportStepIds). */
    previousReports: readonly PreviousReportContext[];
    /** Flow 5 follow-up: the indicator values asked for (inputs.indicatorStepIds order). */
    indicators?: readonly PreviousReportContext[];
  };
  /**
   * Flow 5: the indicators this step may still ask for, one line each (the catalogue with its
   * bounds and the run's timeframes), or undefined when the step may not ask.
   */
  requestableIndicators?: readonly string[];
  limits?: { maxContextBytesPerJsonArtifact?: number; maxChartImageBytes?: number };
}

export interface AssembledPrompt {
  systemInstruction: string;
  /** UserInput text, one text part per JSON artifact, one inlineData part per chart. */
  contents: LlmPart[];
  /** The parsed artifacts (LlmRequest.context, read by the offline analyst). */
  context: LlmStructuredContext;
  /** Sizes only (safe to log). */
  stats: { jsonBytes: number[]; imageBytes: number[]; totalBytes: number };
}

function toBuffer(json: string | Uint8Array): Buffer {
  return typeof json === 'string' ? Buffer.from(json, 'utf8') : Buffer.from(json);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_DESCRIPTION_CHARS
    ? `${flat.slice(0, MAX_DESCRIPTION_CHARS - 3)}...`
    : flat;
}

/** A JSON context artifact checked against the size limit and parsed (text kept for the prompt). */
export interface LoadedJson {
  kind: ContextArtifactKind;
  uri: string;
  label: string;
  text: string;
  bytes: number;
  parsed: unknown;
}

/** Size limit, then JSON parse: ContextLimitError / ContextInputError (INVALID_STEP_INPUTS). */
export function loadJson(
  kind: ContextArtifactKind,
  artifact: JsonContextArtifact,
  label: string,
  limit: number,
): LoadedJson {
  const buffer = toBuffer(artifact.json);
  if (buffer.length > limit) throw new ContextLimitError(kind, artifact.uri, buffer.length, limit);
  const text = buffer.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ContextInputError(`${kind} artifact ${artifact.uri} is not valid JSON`, {
      artifact: kind,
      uri: artifact.uri,
      bytes: buffer.length,
    });
  }
  return { kind, uri: artifact.uri, label, text, bytes: buffer.length, parsed };
}

/**
 * Builds the model request contents (seed 002 "Prompt assembly"): the prompt's base userPrompt
 * followed by a generated UserInput section (identity, one line per input, the chart
 * descriptions), then each JSON artifact as its own text part (the downloaded content, unchanged)
 * and each chart PNG as an inlineData part, in the order UserInput lists them. The limits are
 * checked before anything is built: a JSON artifact over 64 KB or an image over 256 KB is a
 * ContextLimitError (INVALID_STEP_INPUTS) naming the artifact, its size and the limit. The same
 * input always gives the same output (no clock, no randomness).
 */
export function assemblePrompt(input: PromptAssemblyInput): AssembledPrompt {
  const jsonLimit =
    input.limits?.maxContextBytesPerJsonArtifact ?? MAX_CONTEXT_BYTES_PER_JSON_ARTIFACT;
  const imageLimit = input.limits?.maxChartImageBytes ?? MAX_CHART_IMAGE_BYTES;
  const { identity, context } = input;
  // Every limit is checked (JSON first, then images) before any part is built.
  const jsons = loadContextJsons(identity, context, jsonLimit);
  const images = context.charts.map((chart) => loadChartImage(chart, imageLimit));
  const lines = [
    ...userInputLines(identity, jsons, images),
    ...requestableLines(input.requestableIndicators),
  ];
  const jsonBytes = jsons.map((json) => json.bytes);
  const imageBytes = images.map(({ png }) => png.length);
  return {
    systemInstruction: input.prompt.systemInstruction,
    contents: requestContents(input.prompt.userPrompt, lines, jsons, images),
    context: structuredContextOf(identity, jsons, input.requestableIndicators),
    stats: {
      jsonBytes,
      imageBytes,
      totalBytes: [...jsonBytes, ...imageBytes].reduce((a, b) => a + b, 0),
    },
  };
}

/** A chart PNG checked against the size limit and its signature, kept with its manifest item. */
interface LoadedImage {
  chart: ChartContextImage;
  png: Buffer;
}

/** The JSON inputs in prompt order: OHLCV, charts manifest, the earlier reports, indicators. */
function loadContextJsons(
  identity: PromptAssemblyInput['identity'],
  context: PromptAssemblyInput['context'],
  jsonLimit: number,
): LoadedJson[] {
  return [
    loadJson(
      'ohlcv',
      context.ohlcv,
      `OHLCV export: ${identity.symbol} ${identity.timeframe} candles`,
      jsonLimit,
    ),
    loadJson(
      'chartsManifest',
      context.chartsManifest,
      'Charts manifest: the rendered charts and their descriptions',
      jsonLimit,
    ),
    ...context.previousReports.map((report) =>
      loadJson(
        'previousReport',
        report,
        `Earlier report of this run (step ${report.stepId})`,
        jsonLimit,
      ),
    ),
    ...(context.indicators ?? []).map((values) =>
      loadJson(
        'indicators',
        values,
        `Indicator values computed for this run (step ${values.stepId})`,
        jsonLimit,
      ),
    ),
  ];
}

/** Flow 5: the catalogue the model may ask from, after the numbered inputs. */
function requestableLines(requestable: readonly string[] | undefined): string[] {
  if (requestable === undefined) return [];
  if (requestable.length === 0) {
    return ['', 'Indicators you may request: none in this step (do not add indicatorRequests).'];
  }
  return [
    '',
    'Indicators you may request (indicatorRequests; parameters within the bounds, omitted ones take the default):',
    ...requestable.map((line) => `- ${line}`),
  ];
}

/** Size limit, then the PNG signature: ContextLimitError / ContextInputError (INVALID_STEP_INPUTS). */
function loadChartImage(chart: ChartContextImage, imageLimit: number): LoadedImage {
  const png = Buffer.from(chart.png);
  if (png.length > imageLimit)
    throw new ContextLimitError('chart', chart.uri, png.length, imageLimit);
  if (
    png.length < PNG_SIGNATURE.length ||
    !png.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)
  ) {
    throw new ContextInputError(`chart ${chart.uri} is not a PNG image`, {
      artifact: 'chart',
      uri: chart.uri,
      bytes: png.length,
    });
  }
  return { chart, png };
}

/** The UserInput section: identity, then one numbered line per part that follows it. */
function userInputLines(
  identity: PromptAssemblyInput['identity'],
  jsons: readonly LoadedJson[],
  images: readonly LoadedImage[],
): string[] {
  const tfName = TIMEFRAME_NAMES[identity.timeframe] ?? identity.timeframe;
  const lines: string[] = [
    '## UserInput',
    '',
    `- Symbol: ${identity.symbol}`,
    `- Timeframe: ${identity.timeframe} (${tfName})`,
    `- Run: ${identity.runId}`,
    `- Step: ${identity.stepId}`,
    '',
    `The inputs follow this message as separate parts, in this order (${jsons.length} JSON documents, then ${images.length} chart images):`,
  ];
  let n = 0;
  for (const json of jsons) {
    n += 1;
    lines.push(`${n}. ${json.label} (JSON, ${json.bytes} bytes) - ${json.uri}`);
  }
  for (const { chart, png } of images) {
    n += 1;
    const template = chart.chartTemplateId === undefined ? '' : ` ${chart.chartTemplateId}`;
    lines.push(`${n}. Chart image${template} (PNG, ${png.length} bytes) - ${chart.uri}`);
    lines.push(`   Description: ${oneLine(chart.description)}`);
  }
  if (images.length === 0) lines.push('No chart images are available for this step.');
  return lines;
}

/** userPrompt + UserInput, then the JSON texts unchanged, then the PNGs, in UserInput's order. */
function requestContents(
  userPrompt: string,
  lines: readonly string[],
  jsons: readonly LoadedJson[],
  images: readonly LoadedImage[],
): LlmPart[] {
  const contents: LlmPart[] = [{ text: `${userPrompt}\n\n${lines.join('\n')}\n` }];
  jsons.forEach((json, index) => {
    contents.push({ text: `Input ${index + 1}: ${json.label} (${json.uri})\n${json.text}` });
  });
  for (const { png } of images) {
    contents.push({ inlineData: { mimeType: 'image/png', data: png.toString('base64') } });
  }
  return contents;
}

/** The parsed artifacts by role (positions fixed by loadContextJsons), for the offline analyst. */
function structuredContextOf(
  identity: PromptAssemblyInput['identity'],
  jsons: readonly LoadedJson[],
  requestable: readonly string[] | undefined,
): LlmStructuredContext {
  return {
    symbol: identity.symbol,
    timeframe: identity.timeframe,
    ohlcv: jsons[0]?.parsed,
    chartsManifest: jsons[1]?.parsed,
    previousReports: jsons.filter((j) => j.kind === 'previousReport').map((json) => json.parsed),
    indicatorValues: jsons.filter((j) => j.kind === 'indicators').map((json) => json.parsed),
    ...(requestable === undefined || requestable.length === 0
      ? {}
      : { mayRequestIndicators: true }),
  };
}
