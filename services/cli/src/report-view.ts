import { TdaError, validate, type FlowRun, type LlmReportFile } from '@tda/contracts';
import { reusedFromOf, stepOf, topologicalOrder } from '@tda/flow-engine';
import { ApiError, type ApiClient } from './api-client';

/** `tda report` cannot show what was asked for; printed as one `error <CODE>: ...` line, exit 1. */
export class ReportError extends TdaError {}

export interface ReportSelection {
  /** LLM_REPORT steps to show, dependencies first (a 1w report after the 1M one it builds on). */
  stepIds: string[];
  /** LLM_REPORT steps left out because they have not SUCCEEDED, with why (for a note). */
  skipped: string[];
}

function describeStatus(run: FlowRun, stepId: string): string {
  const step = stepOf(run, stepId);
  if (step === undefined) return `${stepId}: missing`;
  const error = step.error === undefined ? '' : ` (${step.error.code})`;
  return `${stepId}: ${step.status}${error}`;
}

/**
 * Which reports `tda report` prints: the one `--step` names (it must be a SUCCEEDED LLM_REPORT
 * step), else every SUCCEEDED LLM_REPORT step in DAG order with lexicographic ties (flow-engine
 * topologicalOrder). No report to show is a ReportError naming what the run has instead.
 */
export function selectReportSteps(run: FlowRun, stepId?: string): ReportSelection {
  if (stepId !== undefined) {
    const step = stepOf(run, stepId);
    if (step === undefined)
      throw new ReportError('NOT_FOUND', `run ${run.runId} has no step ${stepId}`);
    if (step.stepType !== 'LLM_REPORT') {
      throw new ReportError(
        'INVALID_REQUEST',
        `step ${stepId} has type ${step.stepType}; tda report shows LLM_REPORT steps (tda get ${run.runId} lists them)`,
      );
    }
    if (step.status !== 'SUCCEEDED') {
      throw new ReportError(
        'CONFLICT',
        `step ${describeStatus(run, stepId)}: its report exists once the step SUCCEEDED`,
      );
    }
    return { stepIds: [stepId], skipped: [] };
  }
  const reports = topologicalOrder(run.steps).filter(
    (id) => stepOf(run, id)?.stepType === 'LLM_REPORT',
  );
  if (reports.length === 0) {
    throw new ReportError('NOT_FOUND', `run ${run.runId} (${run.flowKey}) has no LLM_REPORT steps`);
  }
  const succeeded = reports.filter((id) => stepOf(run, id)?.status === 'SUCCEEDED');
  const skipped = reports.filter((id) => !succeeded.includes(id));
  if (succeeded.length === 0) {
    throw new ReportError(
      'CONFLICT',
      `run ${run.runId} (${run.status}) has no succeeded LLM report yet: ${skipped
        .map((id) => describeStatus(run, id))
        .join(', ')}`,
    );
  }
  return { stepIds: succeeded, skipped: skipped.map((id) => describeStatus(run, id)) };
}

export interface FetchedReport {
  stepId: string;
  uri: string;
  report: LlmReportFile;
  /** The run that produced the report when a rerun reused the step (not this run). */
  reusedFrom?: string;
}

/**
 * Whose file a step's artifact is: the step of this run, or for a step a rerun reused
 * (`outputs.execution.reusedFrom`) the producing run's step, whose file names that run.
 */
function expectedOwner(run: FlowRun, stepId: string): { runId: string; stepId: string } {
  const reused = reusedFromOf(stepOf(run, stepId));
  return reused === undefined ? { runId: run.runId, stepId } : reused;
}

export interface FetchedReports {
  reports: FetchedReport[];
  /** One line per report that could not be fetched or is not a valid llm_report_file. */
  failures: string[];
}

/**
 * Fetches each report artifact through the API and checks it against the llm_report_file
 * contract (and that it is the file of this run and step) before anything is printed from it.
 */
export async function fetchReports(
  api: Pick<ApiClient, 'stepArtifact'>,
  run: FlowRun,
  stepIds: readonly string[],
): Promise<FetchedReports> {
  const reports: FetchedReport[] = [];
  const failures: string[] = [];
  for (const stepId of stepIds) {
    let body: unknown;
    try {
      body = await api.stepArtifact(run.runId, stepId);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Auth and connection problems concern every report: stop at the first one.
      if (error.status === 0 || error.status === 401) throw error;
      failures.push(
        `${stepId}: ${error.code}${error.status > 0 ? ` (HTTP ${error.status})` : ''}: ${error.message}`,
      );
      continue;
    }
    const checked = validate.llmReportFile(body);
    if (!checked.ok) {
      const issues = checked.issues
        .slice(0, 5)
        .map((i) => `${i.path || '/'} (${i.keyword})`)
        .join('; ');
      failures.push(`${stepId}: the artifact is not a valid llm_report_file: ${issues}`);
      continue;
    }
    const { metadata } = checked.value;
    const owner = expectedOwner(run, stepId);
    const reused = owner.runId === run.runId ? '' : ` (reused from ${owner.runId})`;
    if (metadata.runId !== owner.runId || metadata.stepId !== owner.stepId) {
      failures.push(
        `${stepId}: the artifact belongs to ${metadata.runId} / ${metadata.stepId}, not to this step${reused}`,
      );
      continue;
    }
    const uri = stepOf(run, stepId)?.outputs.gcs_uri ?? '';
    reports.push({
      stepId,
      uri,
      report: checked.value,
      ...(owner.runId === run.runId ? {} : { reusedFrom: owner.runId }),
    });
  }
  return { reports, failures };
}

/** An aggregated report (flow 3) has no timeframe: the reports it synthesised instead. */
function aggregatedOf(report: LlmReportFile): string {
  const refs = report.metadata.inputs.reportRefs ?? [];
  return `aggregated over ${refs.map((r) => `${r.reportId}${r.timeframe === undefined ? '' : ` (${r.timeframe})`}`).join(', ')}`;
}

/** A header (step, timeframe, model, artifact, asOf) and the report's summary markdown. */
export function renderReport({ stepId, uri, report, reusedFrom }: FetchedReport): string[] {
  const { metadata } = report;
  return [
    `━━ ${stepId}`,
    `timeframe  ${metadata.timeframe ?? aggregatedOf(report)}`,
    `model      ${metadata.provider}/${metadata.modelName}`,
    `prompt     ${metadata.promptId}`,
    `artifact   ${uri}`,
    ...(metadata.asOf === undefined ? [] : [`as of      ${metadata.asOf}`]),
    ...(reusedFrom === undefined ? [] : [`reused     from run ${reusedFrom}`]),
    '',
    report.output.summary.markdown.trimEnd(),
    '',
  ];
}
