import type { LlmReportFile } from '@tda/contracts';

/** llm_aggregate_report_output_v<N>: the output format of an aggregated report (flow 3). */
const AGGREGATE_SCHEMA_ID = /^llm_aggregate_report_output_v[1-9][0-9]*$/;

/** What only a report of one timeframe reads: its OHLCV export, charts and earlier reports. */
const TIMEFRAME_INPUTS = [
  'ohlcvGcsUri',
  'chartsManifestGcsUri',
  'chartGcsUris',
  'previousReportGcsUris',
] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An aggregated report: no timeframe, only reportRefs, an aggregate schema, known citations. */
function aggregatedProblem(
  file: LlmReportFile,
  refs: NonNullable<LlmReportFile['metadata']['inputs']['reportRefs']>,
): string | undefined {
  const { metadata } = file;
  if (metadata.timeframe !== undefined) {
    return 'an aggregated report (metadata.inputs.reportRefs) has no metadata.timeframe';
  }
  const foreign = TIMEFRAME_INPUTS.find((field) => metadata.inputs[field] !== undefined);
  if (foreign !== undefined) {
    return `an aggregated report reads no OHLCV, charts or earlier reports (metadata.inputs.${foreign})`;
  }
  if (!AGGREGATE_SCHEMA_ID.test(metadata.schemaId)) {
    return `an aggregated report has an llm_aggregate_report_output_v<N> schemaId, not ${metadata.schemaId}`;
  }
  const known = new Set(refs.map((r) => r.reportId));
  if (known.size !== refs.length) return 'metadata.inputs.reportRefs names a reportId twice';
  const citations = file.output.details['citations'];
  if (!Array.isArray(citations) || citations.length === 0) {
    return 'an aggregated report cites its input reports in output.details.citations';
  }
  const unknown = citations.findIndex((c) => {
    const reportId = isObject(c) ? c['reportId'] : undefined;
    return typeof reportId !== 'string' || !known.has(reportId);
  });
  return unknown === -1
    ? undefined
    : `output.details.citations[${unknown}] cites no report of metadata.inputs.reportRefs`;
}

/** A report of one timeframe: its timeframe and the four inputs the contract leaves optional. */
function timeframeProblem(file: LlmReportFile): string | undefined {
  const { metadata } = file;
  if (metadata.timeframe === undefined) return 'a report of one timeframe needs metadata.timeframe';
  const missing = TIMEFRAME_INPUTS.find((field) => metadata.inputs[field] === undefined);
  if (missing !== undefined) return `metadata.inputs lacks ${missing}`;
  if (AGGREGATE_SCHEMA_ID.test(metadata.schemaId)) {
    return `${metadata.schemaId} is the output format of aggregated reports (metadata.inputs.reportRefs)`;
  }
  return undefined;
}

/**
 * The artifact check of an llm_report_file (what its schema leaves open since flow 3): schemaVersion
 * is the N of its schemaId; a report of one timeframe has its timeframe and its OHLCV, charts and
 * earlier-report inputs; an aggregated report (metadata.inputs.reportRefs) has none of them, an
 * aggregate schemaId, distinct input reports and citations of those reports only. Problems are
 * our own words, field names and indices: never report text.
 */
export function llmReportFileProblem(file: LlmReportFile): string | undefined {
  const { metadata } = file;
  if (!metadata.schemaId.endsWith(`_v${metadata.schemaVersion}`)) {
    return `metadata.schemaVersion ${metadata.schemaVersion} does not match schemaId ${metadata.schemaId}`;
  }
  const refs = metadata.inputs.reportRefs;
  return refs === undefined ? timeframeProblem(file) : aggregatedProblem(file, refs);
}
