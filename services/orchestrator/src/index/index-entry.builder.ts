import type {
  FlowRun,
  FlowStep,
  LlmRecommendationFile,
  LlmReportFile,
  RecommendationIndexEntry,
  ReportIndexEntry,
  StepType,
} from '@tda/contracts';
import { recommendationIdFor, reportIdFor, reusedFromOf, stepOf } from '@tda/flow-engine';
import { canonicalInstant, symbolKeyOf, type IndexKind } from '@tda/report-index';

/*
 * The pure half of the index writer: (run, stepId, artifact) -> the reports/{reportId} or
 * recommendations/{recoId} entry. No clock and no I/O: every field comes from the run document
 * and the artifact, so the step-event path, a redelivery and the backfill all build the same
 * entry, and whichever writes first writes what the others would have.
 */

export const HEADLINE_MAX = 200;

/** The step types whose artifacts are indexed, and the index each goes to. */
export const INDEXED_STEP_TYPES: Readonly<Partial<Record<StepType, IndexKind>>> = {
  LLM_REPORT: 'report',
  LLM_RECOMMENDATION: 'recommendation',
};

export function indexKindOf(stepType: StepType): IndexKind | undefined {
  return INDEXED_STEP_TYPES[stepType];
}

/**
 * The (runId, stepId) that produced a step's artifact: the step itself, or for a step a rerun
 * reused (outputs.execution.reusedFrom) the producing run's step, whose file names that run. The
 * index id follows the producer, so a reused report is the one entry it already had.
 */
export function producerOf(run: FlowRun, stepId: string): { runId: string; stepId: string } {
  const reused = reusedFromOf(stepOf(run, stepId));
  return reused === undefined
    ? { runId: run.runId, stepId }
    : { runId: reused.runId, stepId: reused.stepId };
}

/** The index id of a step's artifact (reportIdFor / recommendationIdFor of its producer). */
export function indexIdOf(kind: IndexKind, run: FlowRun, stepId: string): string {
  const producer = producerOf(run, stepId);
  return kind === 'report'
    ? reportIdFor(producer.runId, producer.stepId)
    : recommendationIdFor(producer.runId, producer.stepId);
}

// eslint-disable-next-line no-control-regex -- dropping control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;

/** Model text as one plain line: control characters dropped, whitespace collapsed, at most `max`. */
export function plainText(text: string, max = HEADLINE_MAX): string {
  const plain = text.replace(CONTROL_CHARS, ' ').replace(/\s+/g, ' ').trim();
  if (plain.length <= max) return plain;
  // Never leave half of a surrogate pair before the ellipsis.
  return `${plain
    .slice(0, max - 1)
    .replace(/[\uD800-\uDBFF]$/, '')
    .trimEnd()}…`;
}

/** One Markdown line as plain text: block marks, emphasis, code ticks and link targets removed. */
function markdownLineText(line: string): string {
  const trimmed = line.trim();
  if (/^([-*_=]\s*){3,}$/.test(trimmed)) return ''; // a thematic break or a setext underline
  return trimmed
    .replace(/^#{1,6}\s*/, '')
    .replace(/\s#+\s*$/, '')
    .replace(/^(>\s*)+/, '')
    .replace(/^([-*+]|\d+[.)])\s+/, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\*\*|__|~~|`|\*/g, '');
}

/** The first non-empty line of a report's Markdown as plain text (≤ 200 chars); '' if none. */
export function markdownHeadline(markdown: string): string {
  for (const line of markdown.split(/\r?\n/)) {
    const text = plainText(markdownLineText(line));
    if (text.length > 0) return text;
  }
  return '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const BIASES = ['bullish', 'bearish', 'sideways'] as const;
type Bias = (typeof BIASES)[number];
/** trend.strength of llm_report_output_v1 as a number, for reports without details.confidence. */
const STRENGTH_CONFIDENCE: Readonly<Record<string, number>> = {
  weak: 0.3,
  moderate: 0.6,
  strong: 0.9,
};

/**
 * bias and confidence from the model-owned details (shape set by the registry schema, so read
 * defensively): bias = details.trend.direction when it is bullish|bearish|sideways;
 * confidence = details.confidence when a number in 0..1, else trend.strength weak 0.3 /
 * moderate 0.6 / strong 0.9. Absent when the report does not say.
 */
export function reportSignals(details: unknown): { bias?: Bias; confidence?: number } {
  if (!isRecord(details)) return {};
  const trend = isRecord(details['trend']) ? details['trend'] : {};
  const signals: { bias?: Bias; confidence?: number } = {};
  const direction = trend['direction'];
  if (typeof direction === 'string' && (BIASES as readonly string[]).includes(direction)) {
    signals.bias = direction as Bias;
  }
  const stated = details['confidence'];
  const strength = trend['strength'];
  if (typeof stated === 'number' && stated >= 0 && stated <= 1) signals.confidence = stated;
  else if (typeof strength === 'string' && STRENGTH_CONFIDENCE[strength] !== undefined) {
    signals.confidence = STRENGTH_CONFIDENCE[strength];
  }
  return signals;
}

/**
 * When the artifact was produced: the step's finishedAt, else the file's generatedAt, else the
 * run's updatedAt (deterministic: never the clock of the writer).
 */
function producedAt(run: FlowRun, step: FlowStep | undefined, generatedAt?: string): string {
  return canonicalInstant(step?.finishedAt ?? generatedAt ?? run.updatedAt);
}

/** The moment the run describes: scope.asOf; a run from before asOf existed: its createdAt. */
function runAsOf(run: FlowRun, fallback?: string): string {
  return canonicalInstant(run.scope.asOf ?? fallback ?? run.createdAt);
}

export interface IndexedArtifact<F> {
  uri: string;
  file: F;
}

/** reports/{reportId} of a SUCCEEDED LLM_REPORT step whose artifact is `artifact`. */
export function buildReportIndexEntry(
  run: FlowRun,
  stepId: string,
  artifact: IndexedArtifact<LlmReportFile>,
): ReportIndexEntry {
  const { metadata, output } = artifact.file;
  const producer = producerOf(run, stepId);
  const step = stepOf(run, stepId);
  const timeframe = metadata.timeframe ?? step?.timeframe;
  const headline =
    markdownHeadline(output.summary.markdown) ||
    plainText(`${run.scope.symbol} ${timeframe ?? ''} report`);
  return {
    schemaVersion: 1,
    reportId: reportIdFor(producer.runId, producer.stepId),
    ownerId: run.ownerId,
    runId: producer.runId,
    stepId: producer.stepId,
    flowKey: run.flowKey,
    symbol: run.scope.symbol,
    symbolKey: symbolKeyOf(run.scope.symbol),
    ...(timeframe === undefined ? {} : { timeframe }),
    asOf: runAsOf(run),
    provider: metadata.provider,
    modelName: metadata.modelName,
    promptId: metadata.promptId,
    headline,
    ...reportSignals(output.details),
    createdAt: producedAt(run, step, metadata.generatedAt),
    gcs_uri: artifact.uri,
  };
}

/** recommendations/{recoId} of a SUCCEEDED LLM_RECOMMENDATION step. */
export function buildRecommendationIndexEntry(
  run: FlowRun,
  stepId: string,
  artifact: IndexedArtifact<LlmRecommendationFile>,
): RecommendationIndexEntry {
  const { metadata, output } = artifact.file;
  const producer = producerOf(run, stepId);
  const accountId = metadata.inputs.accountId ?? run.scope.accountId;
  return {
    schemaVersion: 1,
    recoId: recommendationIdFor(producer.runId, producer.stepId),
    ownerId: run.ownerId,
    runId: producer.runId,
    stepId: producer.stepId,
    flowKey: run.flowKey,
    symbol: run.scope.symbol,
    symbolKey: symbolKeyOf(run.scope.symbol),
    asOf: runAsOf(run, metadata.asOf),
    ...(accountId === undefined ? {} : { accountId }),
    action: output.action,
    signal_strength: output.signal_strength,
    headline: plainText(output.headline) || `${output.action} ${run.scope.symbol}`,
    provider: metadata.provider,
    modelName: metadata.modelName,
    reportIds: [...new Set(metadata.inputs.reports.map((r) => r.reportId))],
    createdAt: producedAt(run, stepOf(run, stepId), metadata.generatedAt),
    gcs_uri: artifact.uri,
  };
}
