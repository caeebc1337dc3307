import { join } from 'node:path';
import { parseGcsUri, type ArtifactStore } from '@tda/artifacts';
import { validate, type FlowRun } from '@tda/contracts';
import { RECOMMENDATION_FLOW_KEY } from '@tda/flow-engine';
import { ApiClient, recommendationOfRun, renderRecommendation, watchRun } from '@tda/service-cli';

export interface DemoOptions {
  url: string;
  token: string;
  flowKey: string;
  symbol: string;
  /** scope.accountId of flows that size against an account (flow 4). */
  accountId?: string;
  dataDir: string;
  artifacts: ArtifactStore;
  out: { write(text: string): boolean; isTTY?: boolean };
  signal?: AbortSignal;
}

/** Where the local adapters keep gs://bucket/path (LocalArtifactStore layout). */
export function localPath(dataDir: string, uri: string): string {
  const { bucket, path } = parseGcsUri(uri);
  return join(dataDir, bucket, path);
}

/** Every artifact of a finished run, including the PNGs listed in chart manifests. */
export async function runArtifacts(
  run: FlowRun,
  artifacts: ArtifactStore,
): Promise<{ stepId: string; uri: string; kind: string }[]> {
  const list: { stepId: string; uri: string; kind: string }[] = [];
  for (const stepId of Object.keys(run.steps).sort()) {
    const step = run.steps[stepId];
    const uri = step?.outputs.gcs_uri;
    if (step === undefined || uri === undefined) continue;
    list.push({
      stepId,
      uri,
      kind: step.stepType === 'CHART_EXPORT' ? 'charts manifest' : step.stepType,
    });
    if (step.stepType !== 'CHART_EXPORT') continue;
    const manifest = validate.chartsManifest(
      JSON.parse((await artifacts.read(uri)).toString('utf8')),
    );
    if (!manifest.ok) continue;
    for (const item of manifest.value.items)
      list.push({ stepId, uri: item.gcs_uri, kind: `PNG ${item.kind}` });
  }
  return list;
}

export interface ReportSummary {
  stepId: string;
  timeframe: string;
  uri: string;
  /** provider + the report's first Markdown line, or why the file could not be read. */
  headline: string;
}

/** Model text for a terminal line: no control characters (escape sequences), at most 120 chars. */
function printable(text: string): string {
  const plain = [...text].filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f);
  const line = plain.join('');
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/** The LLM_REPORT artifacts of a finished run, in step order, with a one-line headline each. */
export async function runReports(run: FlowRun, artifacts: ArtifactStore): Promise<ReportSummary[]> {
  const reports: ReportSummary[] = [];
  for (const stepId of Object.keys(run.steps).sort()) {
    const step = run.steps[stepId];
    const uri = step?.outputs.gcs_uri;
    if (step?.stepType !== 'LLM_REPORT' || uri === undefined) continue;
    let headline: string;
    try {
      const checked = validate.llmReportFile(
        JSON.parse((await artifacts.read(uri)).toString('utf8')),
      );
      if (checked.ok) {
        const first = checked.value.output.summary.markdown
          .split('\n')
          .map((line) => line.replace(/^#+\s*/, '').trim())
          .find((line) => line.length > 0);
        headline = `${checked.value.metadata.provider}  ${printable(first ?? '')}`.trimEnd();
      } else headline = 'not a valid llm_report_file';
    } catch (error) {
      headline = `unreadable: ${error instanceof Error ? error.message : String(error)}`;
    }
    reports.push({ stepId, timeframe: step.timeframe ?? '', uri, headline });
  }
  return reports;
}

/** Triggers the demo run, draws its progress until it finishes and prints where the files are. */
export async function runDemo(options: DemoOptions): Promise<FlowRun> {
  const client = new ApiClient({ baseUrl: options.url, token: options.token });
  const takesAccount = options.flowKey === RECOMMENDATION_FLOW_KEY;
  const { run } = await client.trigger({
    flowKey: options.flowKey,
    scope: {
      symbol: options.symbol,
      ...(takesAccount && options.accountId !== undefined ? { accountId: options.accountId } : {}),
    },
    trigger: { type: 'DEBUG_HTTP', source: 'npm start demo' },
  });
  options.out.write(
    `\ndemo run ${run.runId} (${options.flowKey}, ${options.symbol}, as of ${String(run.scope.asOf)})\n`,
  );
  const final = await watchRun(client, run.runId, {
    out: options.out,
    intervalMs: 300,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const files = await runArtifacts(final, options.artifacts);
  if (files.length > 0) {
    options.out.write('\nartifacts (gs:// URI -> local file):\n');
    for (const file of files) {
      options.out.write(
        `  ${file.kind.padEnd(16)} ${file.uri}\n    ${localPath(options.dataDir, file.uri)}\n`,
      );
    }
  }
  const reports = await runReports(final, options.artifacts);
  if (reports.length > 0) {
    options.out.write('\nreports (llm_report_file: gs:// URI -> local file):\n');
    for (const report of reports) {
      options.out.write(
        `  ${report.timeframe.padEnd(3)} ${report.headline}\n    ${report.uri}\n    ${localPath(options.dataDir, report.uri)}\n`,
      );
    }
    options.out.write(`  read them: npx tda report ${final.runId}\n`);
  }
  await printRecommendation(client, final, options.out);
  return final;
}

/** The recommendation of a finished flow 4 run, last, so it is what the terminal ends with. */
async function printRecommendation(
  client: ApiClient,
  run: FlowRun,
  out: DemoOptions['out'],
): Promise<void> {
  if (run.status !== 'SUCCEEDED') return;
  const answer = await recommendationOfRun(client, run);
  if (answer === undefined) return;
  out.write(
    `\nrecommendation (${answer.stepId}):\n${renderRecommendation(answer.file, answer.reports)}\n`,
  );
  out.write(
    `  again: npx tda recommend ${run.scope.symbol} --account ${String(run.scope.accountId)} --watch\n`,
  );
}
