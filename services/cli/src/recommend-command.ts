import type { Command } from 'commander';
import {
  validate,
  type FlowRun,
  type LlmRecommendationFile,
  type TriggerRequest,
} from '@tda/contracts';
import { RECOMMENDATION_FLOW_KEY, reportIdFor, topologicalOrder } from '@tda/flow-engine';
import type { ApiClient } from './api-client';
import { CliError } from './cli-error';
import {
  parseRecommendationFile,
  renderRecommendation,
  reportHeadline,
  type CitedReport,
} from './recommendation-view';
import { watchRun } from './watch';

/** What `tda recommend` needs of the CLI (a structural slice of cli.ts's context). */
export interface RecommendCommandContext {
  io: {
    stdout: { write(text: string): boolean; isTTY?: boolean };
    watchIntervalMs?: number;
  };
  outcome: { exitCode: number };
  client(): ApiClient;
}

/** A finished recommendation run's answer: the recommendation and the reports it rests on. */
export interface RunRecommendation {
  stepId: string;
  file: LlmRecommendationFile;
  reports: CitedReport[];
}

/** RFC 3339 with any offset -> the contract's UTC form; a clear error for anything else. */
export function normalizeAsOf(value: string): string {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new CliError(
      'INVALID_REQUEST',
      `--as-of must be an RFC 3339 time such as 2026-09-20T00:00:00Z (got '${value}')`,
    );
  }
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** The headline of a report artifact, or why there is none. */
function headlineOf(artifact: unknown): string {
  const checked = validate.llmReportFile(artifact);
  return checked.ok ? reportHeadline(checked.value.output.summary.markdown) : '(unreadable report)';
}

/**
 * The recommendation of a SUCCEEDED run (its LLM_RECOMMENDATION step's artifact) with the
 * headline of every report it was given, read from the run's own artifacts; undefined when the
 * run has no succeeded recommendation step.
 */
export async function recommendationOfRun(
  api: Pick<ApiClient, 'stepArtifact'>,
  run: FlowRun,
): Promise<RunRecommendation | undefined> {
  const stepId = topologicalOrder(run.steps).find(
    (id) =>
      run.steps[id]?.stepType === 'LLM_RECOMMENDATION' && run.steps[id]?.status === 'SUCCEEDED',
  );
  if (stepId === undefined) return undefined;
  const file = parseRecommendationFile(await api.stepArtifact(run.runId, stepId));
  if (file === undefined) {
    throw new CliError(
      'UPSTREAM_UNAVAILABLE',
      `the artifact of ${stepId} is not a valid llm_recommendation_file`,
    );
  }
  const reports: CitedReport[] = [];
  for (const input of file.metadata.inputs.reports) {
    const sameRun = reportIdFor(run.runId, input.stepId) === input.reportId;
    const headline = sameRun ? headlineOf(await api.stepArtifact(run.runId, input.stepId)) : '';
    reports.push({
      reportId: input.reportId,
      headline,
      ...(input.timeframe === undefined ? {} : { timeframe: input.timeframe }),
    });
  }
  return { stepId, file, reports };
}

function requestOf(
  symbol: string,
  opts: Record<string, string | boolean | undefined>,
): TriggerRequest {
  const scope: TriggerRequest['scope'] = { symbol, accountId: String(opts['account']) };
  if (typeof opts['asOf'] === 'string') scope.asOf = normalizeAsOf(opts['asOf']);
  if (typeof opts['timeframes'] === 'string') {
    scope.timeframes = opts['timeframes'].split(',').map((t) => t.trim()) as never;
  }
  if (typeof opts['model'] === 'string') scope['modelName'] = opts['model'];
  return {
    flowKey: RECOMMENDATION_FLOW_KEY,
    scope,
    trigger: { type: 'USER', source: 'tda recommend' },
  };
}

/** `tda recommend <symbol>`: flow 4, and with --watch the recommendation at the end. */
export function addRecommendCommand(program: Command, ctx: RecommendCommandContext): void {
  const print = (text: string): void => void ctx.io.stdout.write(`${text}\n`);
  program
    .command('recommend')
    .description('recommend an action for a symbol, sized against an account (flow 4)')
    .argument('<symbol>', 'e.g. BTC-USDT')
    .option('-a, --account <accountId>', 'the account to size against (tda accounts list)', 'demo')
    .option(
      '--as-of <time>',
      'the moment to recommend at (RFC 3339); default: the newest complete candle',
    )
    .option('-t, --timeframes <list>', 'report timeframes, comma-separated (default 1w,1d,4h)')
    .option('--model <modelName>', 'LLM model (default gemini-2.5-flash; offline without a key)')
    .option('-w, --watch', 'follow the run and print the recommendation')
    .action(async (symbol: string, opts: Record<string, string | boolean | undefined>) => {
      const api = ctx.client();
      const { run, created } = await api.trigger(requestOf(symbol, opts));
      print(`${created ? 'created' : 'existing'} ${run.runId} (as of ${String(run.scope.asOf)})`);
      if (opts['watch'] !== true) {
        print(`follow it: npx tda recommend ... --watch, or npx tda watch ${run.runId}`);
        return;
      }
      const final = await watchRun(api, run.runId, {
        out: ctx.io.stdout,
        ...(ctx.io.watchIntervalMs === undefined ? {} : { intervalMs: ctx.io.watchIntervalMs }),
      });
      const answer =
        final.status === 'SUCCEEDED' ? await recommendationOfRun(api, final) : undefined;
      if (answer === undefined) {
        ctx.outcome.exitCode = 1;
        print(
          `run ${final.runId} ended ${final.status}${final.error === undefined ? '' : `: ${final.error.code}: ${final.error.message}`}`,
        );
        return;
      }
      print(`\n${renderRecommendation(answer.file, answer.reports)}`);
    });
}
