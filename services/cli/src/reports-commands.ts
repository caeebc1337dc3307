import type { Command } from 'commander';
import {
  validate,
  type LlmRecommendationFile,
  type LlmReportFile,
  type RecommendationIndexEntry,
  type ReportIndexEntry,
} from '@tda/contracts';
import { ApiError, type ApiClient, type IndexBackfillAnswer } from './api-client';
import { CliError } from './cli-error';
import {
  parseRecommendationFile,
  renderRecommendation,
  terminalText,
  type CitedReport,
} from './recommendation-view';

/** What these commands need of the CLI (a structural slice of cli.ts's context). */
export interface IndexCommandContext {
  io: { stdout: { write(text: string): boolean } };
  client(): ApiClient;
}

function print(ctx: IndexCommandContext, lines: string[] | string): void {
  ctx.io.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) {
    throw new CliError('INVALID_REQUEST', '--limit must be 1..100');
  }
  return n;
}

function parseStrength(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1)) {
    throw new CliError('INVALID_REQUEST', '--min-strength must be a number in 0..1');
  }
  return n;
}

/** `value` as one POSIX shell word (as in `tda list`'s next-page line). */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The command for the next page: the filters given on this command line plus the cursor. */
function nextPage(words: string[], filters: Record<string, unknown>, cursor: string): string {
  for (const [flag, value] of Object.entries(filters)) {
    if (value !== undefined) words.push(`--${flag}`, shellWord(String(value)));
  }
  return [...words, '--cursor', shellWord(cursor)].join(' ');
}

/** One page of a list command: JSON, or one line per entry and the next-page command. */
function printPage<T>(
  ctx: IndexCommandContext,
  list: { words: string[]; filters: Record<string, unknown>; json: boolean | undefined },
  page: { entries: readonly T[]; nextCursor: string | null; raw: unknown },
  render: (entry: T) => string,
  empty: string,
): void {
  if (list.json === true) {
    print(ctx, JSON.stringify(page.raw, null, 2));
    return;
  }
  if (page.entries.length === 0) print(ctx, empty);
  for (const entry of page.entries) print(ctx, render(entry));
  if (page.nextCursor !== null) {
    print(ctx, `next page: ${nextPage(list.words, list.filters, page.nextCursor)}`);
  }
}

const minute = (instant: string): string => instant.slice(0, 16).replace('T', ' ');

/** One line per report: id, asOf, symbol, timeframe, bias/confidence, headline. */
export function renderReportLine(entry: ReportIndexEntry): string {
  const signal = [
    entry.bias ?? '',
    entry.confidence === undefined ? '' : entry.confidence.toFixed(2),
  ]
    .join(' ')
    .trim();
  return [
    entry.reportId,
    minute(entry.asOf),
    entry.symbol.padEnd(10),
    (entry.timeframe ?? '-').padEnd(3),
    signal.padEnd(13),
    terminalText(entry.headline, 90),
  ].join('  ');
}

/** One line per recommendation: id, asOf, symbol, action, strength, headline. */
export function renderRecommendationLine(entry: RecommendationIndexEntry): string {
  return [
    entry.recoId,
    minute(entry.asOf),
    entry.symbol.padEnd(10),
    entry.action.padEnd(6),
    entry.signal_strength.toFixed(2),
    terminalText(entry.headline, 90),
  ].join('  ');
}

/** A report for a terminal: its index metadata, then its Markdown. */
export function renderIndexedReport(entry: ReportIndexEntry, file: LlmReportFile): string[] {
  const signal =
    entry.bias === undefined && entry.confidence === undefined
      ? []
      : [
          `signal      ${entry.bias ?? '-'}${entry.confidence === undefined ? '' : ` (confidence ${entry.confidence.toFixed(2)})`}`,
        ];
  return [
    `━━ ${entry.reportId}  ${terminalText(entry.headline)}`,
    `symbol      ${entry.symbol}${entry.timeframe === undefined ? '' : `  ${entry.timeframe}`}`,
    `as of       ${entry.asOf}`,
    ...signal,
    `model       ${entry.provider}/${entry.modelName}  prompt ${entry.promptId}`,
    `run         ${entry.runId}  step ${entry.stepId}`,
    `artifact    ${entry.gcs_uri}`,
    '',
    file.output.summary.markdown.trimEnd(),
  ];
}

/** The rationale of a recommendation: its summary, then each claim with the report it cites. */
export function renderRationale(
  file: LlmRecommendationFile,
  reports: readonly CitedReport[],
): string[] {
  const headlineOf = new Map(reports.map((r) => [r.reportId, r.headline]));
  const lines = ['rationale', `  ${terminalText(file.output.rationale.summary, 600)}`];
  for (const citation of file.output.rationale.citations) {
    const headline = headlineOf.get(citation.reportId);
    lines.push(
      `  - ${terminalText(citation.claim, 150)}  [${citation.reportId}${headline === undefined ? '' : `: ${terminalText(headline, 70)}`}]`,
    );
  }
  return lines;
}

/** The artifact of an indexed step through GET /runs/{runId}/steps/{stepId}/artifact. */
async function artifactOf(
  api: ApiClient,
  entry: { runId: string; stepId: string },
): Promise<unknown> {
  return api.stepArtifact(entry.runId, entry.stepId);
}

/** The reports a recommendation rests on, with their headlines from the index. */
async function citedReports(api: ApiClient, file: LlmRecommendationFile): Promise<CitedReport[]> {
  const cited: CitedReport[] = [];
  for (const report of file.metadata.inputs.reports) {
    let headline = '(not in the index; tda reports backfill)';
    try {
      headline = (await api.getReport(report.reportId)).headline;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
    cited.push({
      reportId: report.reportId,
      headline,
      ...(report.timeframe === undefined ? {} : { timeframe: report.timeframe }),
    });
  }
  return cited;
}

/** `tda reports list|show|backfill`. */
function addReportsGroup(program: Command, ctx: IndexCommandContext): void {
  const reports = program
    .command('reports')
    .description('the reports index: list and show LLM reports across runs; backfill the index');
  reports
    .command('list')
    .description('your reports, newest first (by the moment they describe)')
    .option('--symbol <symbol>', 'BTC-USDT, BTC/USDT and BTCUSDT are the same symbol')
    .option('--timeframe <tf>', '1h|4h|1d|1w|1M')
    .option('--as-of <rfc3339>', 'only reports describing this moment or earlier')
    .option('--limit <n>', 'page size (1..100)', parseLimit)
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(
      async (opts: {
        symbol?: string;
        timeframe?: string;
        asOf?: string;
        limit?: number;
        cursor?: string;
        json?: boolean;
      }) => {
        const page = await ctx.client().listReports({
          symbol: opts.symbol,
          timeframe: opts.timeframe,
          asOf: opts.asOf,
          limit: opts.limit,
          cursor: opts.cursor,
        });
        const filters = {
          symbol: opts.symbol,
          timeframe: opts.timeframe,
          'as-of': opts.asOf,
          limit: opts.limit,
        };
        printPage(
          ctx,
          { words: ['tda', 'reports', 'list'], filters, json: opts.json },
          { entries: page.reports, nextCursor: page.nextCursor, raw: page },
          renderReportLine,
          'no reports',
        );
      },
    );
  reports
    .command('show')
    .description("a report: its index entry and its Markdown (read from the run's artifact)")
    .argument('<reportId>')
    .option('--json', 'print {entry, report} as JSON')
    .action((reportId: string, opts: { json?: boolean }) => showReport(ctx, reportId, opts));
  reports
    .command('backfill')
    .description(
      'index the reports and recommendations that exist only as artifacts (admin); a dry run unless --apply',
    )
    .option('--apply', 'create the missing entries')
    .option('--json', 'print the answer as JSON')
    .action(async (opts: { apply?: boolean; json?: boolean }) => {
      const answer = await ctx.client().backfillIndex(opts.apply === true);
      print(ctx, opts.json === true ? JSON.stringify(answer, null, 2) : renderBackfill(answer));
    });
}

/** `tda reports show`: the index entry and the report file it points at. */
async function showReport(
  ctx: IndexCommandContext,
  reportId: string,
  opts: { json?: boolean },
): Promise<void> {
  const api = ctx.client();
  const entry = await api.getReport(reportId);
  const checked = validate.llmReportFile(await artifactOf(api, entry));
  if (!checked.ok) {
    throw new CliError(
      'UPSTREAM_UNAVAILABLE',
      `the artifact of ${reportId} (${entry.gcs_uri}) is not a valid llm_report_file`,
    );
  }
  if (opts.json === true) {
    print(ctx, JSON.stringify({ entry, report: checked.value }, null, 2));
    return;
  }
  print(ctx, renderIndexedReport(entry, checked.value));
}

/** `tda recommendations list|show`. */
function addRecommendationsGroup(program: Command, ctx: IndexCommandContext): void {
  const recommendations = program
    .command('recommendations')
    .description('the recommendations index: list and show LLM recommendations across runs');
  recommendations
    .command('list')
    .description('your recommendations, newest first')
    .option('--symbol <symbol>', 'BTC-USDT, BTC/USDT and BTCUSDT are the same symbol')
    .option('--min-strength <x>', 'only signal_strength >= x (0..1)', parseStrength)
    .option('--limit <n>', 'page size (1..100)', parseLimit)
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(
      async (opts: {
        symbol?: string;
        minStrength?: number;
        limit?: number;
        cursor?: string;
        json?: boolean;
      }) => {
        const page = await ctx.client().listRecommendations({
          symbol: opts.symbol,
          minStrength: opts.minStrength,
          limit: opts.limit,
          cursor: opts.cursor,
        });
        const filters = {
          symbol: opts.symbol,
          'min-strength': opts.minStrength,
          limit: opts.limit,
        };
        printPage(
          ctx,
          { words: ['tda', 'recommendations', 'list'], filters, json: opts.json },
          { entries: page.recommendations, nextCursor: page.nextCursor, raw: page },
          renderRecommendationLine,
          'no recommendations',
        );
      },
    );
  recommendations
    .command('show')
    .description(
      'a recommendation: action, strength, levels, size, asOf, rationale with the cited reports',
    )
    .argument('<recoId>')
    .option('--json', 'print {entry, recommendation} as JSON')
    .action(async (recoId: string, opts: { json?: boolean }) => {
      const api = ctx.client();
      const entry = await api.getRecommendation(recoId);
      const file = parseRecommendationFile(await artifactOf(api, entry));
      if (file === undefined) {
        throw new CliError(
          'UPSTREAM_UNAVAILABLE',
          `the artifact of ${recoId} (${entry.gcs_uri}) is not a valid llm_recommendation_file`,
        );
      }
      if (opts.json === true) {
        print(ctx, JSON.stringify({ entry, recommendation: file }, null, 2));
        return;
      }
      const cited = await citedReports(api, file);
      print(ctx, [
        `━━ ${entry.recoId}  run ${entry.runId}`,
        renderRecommendation(file, cited),
        ...renderRationale(file, cited),
      ]);
    });
}

/** The backfill answer: one line of counts, then what was (or would be) created or skipped. */
export function renderBackfill(answer: IndexBackfillAnswer): string {
  const { counts } = answer;
  const head = answer.dryRun
    ? `dry run: would create ${counts.wouldCreate}, already indexed ${counts.alreadyIndexed}, unreadable ${counts.unreadable}`
    : `created ${counts.created}, already indexed ${counts.alreadyIndexed}, unreadable ${counts.unreadable}`;
  const lines = [
    `${head} (${answer.scannedRuns} runs scanned${answer.truncated ? ', more not scanned' : ''})`,
  ];
  for (const item of answer.items) {
    lines.push(
      `  ${item.outcome.padEnd(12)}  ${item.id}  ${item.runId}  ${item.stepId}${item.reason === undefined ? '' : `  (${item.reason})`}`,
    );
  }
  if (answer.itemsTruncated) lines.push('  (more items not listed)');
  if (answer.dryRun && counts.wouldCreate > 0)
    lines.push('run `tda reports backfill --apply` to create them');
  return lines.join('\n');
}

/** Registers `reports` and `recommendations` (buildCli). */
export function addIndexCommands(program: Command, ctx: IndexCommandContext): void {
  addReportsGroup(program, ctx);
  addRecommendationsGroup(program, ctx);
}
