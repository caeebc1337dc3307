import { ArtifactNotFoundError } from '@tda/artifacts';
import { validate, type LlmReportFile, type ReportRef } from '@tda/contracts';
import { assembleAggregatePrompt, citationCheck, type LlmCallPlan } from '@tda/llm';
import { LLM_REPORT_STEP } from '@tda/step-types';
import { StepInputError, type StepContext } from '@tda/worker-kit';
import type { PreparedReport } from './timeframe-context';
import type { ReportMode } from './report-mode';

type Context = StepContext<typeof LLM_REPORT_STEP>;
type AggregateMode = Extract<ReportMode, { kind: 'aggregate' }>;

/** An input report as read and checked: its ref and its file's exact bytes. */
interface InputReport {
  ref: ReportRef;
  bytes: Buffer;
  file: LlmReportFile;
}

/** BASE+QUOTE in upper case without separators (the report index's symbolKey). */
function symbolKey(symbol: string): string {
  return symbol.trim().toUpperCase().replace(/[-/]/g, '');
}

function later(a: string, b: string): boolean {
  return Date.parse(a) > Date.parse(b);
}

/**
 * Reads and checks one input report (flow 3): the trigger checked the index entry, this checks the
 * file itself — it exists, is a valid llm_report_file, is the report the ref names (runId, stepId,
 * timeframe), of the run's symbol, and describes no moment after the run's asOf. A refusal is
 * INVALID_STEP_INPUTS naming the ref (never the file's content); storage trouble stays retryable.
 */
async function readInputReport(
  context: Context,
  ref: ReportRef,
  index: number,
  asOf: string,
): Promise<InputReport> {
  const field = `reportRefs[${index}]`;
  const refuse = (problem: string, details: Record<string, unknown> = {}): never => {
    throw new StepInputError(`inputs.${field} (${ref.reportId}) ${problem}`, {
      field,
      reportId: ref.reportId,
      uri: ref.gcsUri,
      ...details,
    });
  };
  if (later(ref.asOf, asOf)) refuse(`describes ${ref.asOf}, after the run's asOf ${asOf}`);
  let bytes: Buffer;
  try {
    bytes = await context.artifacts.read(ref.gcsUri);
  } catch (error) {
    if (error instanceof ArtifactNotFoundError) return refuse('does not exist');
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return refuse('is not JSON');
  }
  const checked = validate.llmReportFile(parsed);
  if (!checked.ok) {
    const issues = checked.issues.slice(0, 5).map((i) => ({ path: i.path, keyword: i.keyword }));
    return refuse('violates llm_report_file.schema.json', { issues });
  }
  const file = checked.value;
  const problem = LLM_REPORT_STEP.artifact.check?.(file);
  if (problem !== undefined) refuse(`is not a usable report: ${problem}`);
  const { metadata } = file;
  if (metadata.runId !== ref.runId || metadata.stepId !== ref.stepId) {
    refuse(`is the report of ${metadata.runId} / ${metadata.stepId}, not of its ref`);
  }
  if (ref.timeframe !== undefined && metadata.timeframe !== ref.timeframe) {
    refuse(`has timeframe ${metadata.timeframe ?? 'none'}, its ref ${ref.timeframe}`);
  }
  if (symbolKey(metadata.symbol) !== symbolKey(context.run.scope.symbol)) {
    refuse(`is a report of ${metadata.symbol}, not of ${context.run.scope.symbol}`);
  }
  if (metadata.asOf !== undefined && later(metadata.asOf, asOf)) {
    refuse(`describes ${metadata.asOf}, after the run's asOf ${asOf}`);
  }
  return { ref, bytes, file };
}

/** Every ref once, in inputs order (longest timeframe first: the order the prompt reads them). */
async function readInputReports(context: Context, mode: AggregateMode): Promise<InputReport[]> {
  const seen = new Set<string>();
  mode.refs.forEach((ref, index) => {
    if (seen.has(ref.reportId)) {
      throw new StepInputError(`inputs.reportRefs[${index}] names ${ref.reportId} twice`, {
        field: `reportRefs[${index}]`,
        reportId: ref.reportId,
      });
    }
    seen.add(ref.reportId);
  });
  const reports: InputReport[] = [];
  for (const [index, ref] of mode.refs.entries()) {
    reports.push(await readInputReport(context, ref, index, mode.asOf));
  }
  return reports;
}

/**
 * An aggregated report's prompt (the input reports as its only context, within the 64 KB limit of
 * a JSON context artifact each, no charts), its citation check and the file metadata it records.
 */
export async function prepareAggregateReport(
  plan: LlmCallPlan,
  context: Context,
  mode: AggregateMode,
): Promise<PreparedReport> {
  const { run, stepId } = context;
  const reports = await readInputReports(context, mode);
  const assembled = assembleAggregatePrompt({
    prompt: plan.prompt,
    identity: { runId: run.runId, stepId, symbol: run.scope.symbol },
    asOf: mode.asOf,
    reports: reports.map(({ ref, bytes }) => ({
      reportId: ref.reportId,
      uri: ref.gcsUri,
      json: bytes,
      asOf: ref.asOf,
      ...(ref.timeframe === undefined ? {} : { timeframe: ref.timeframe }),
    })),
  });
  const reportRefs = reports.map(({ ref }) => ({
    reportId: ref.reportId,
    gcsUri: ref.gcsUri,
    asOf: ref.asOf,
    ...(ref.timeframe === undefined ? {} : { timeframe: ref.timeframe }),
  }));
  const [first, ...rest] = reportRefs;
  if (first === undefined)
    throw new StepInputError('inputs.reportRefs is empty', { field: 'reportRefs' });
  return {
    assembled,
    check: citationCheck(reportRefs.map((r) => r.reportId)),
    asOf: mode.asOf,
    sources: { reportRefs: [first, ...rest] },
  };
}
