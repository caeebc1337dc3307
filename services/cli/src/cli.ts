import { Command, CommanderError } from 'commander';
import type { EnvSource } from '@tda/config';
import { isTdaError, type FlowRun, type TriggerRequest } from '@tda/contracts';
import { createFirestore } from '@tda/flow-store';
import { FirestorePromptRegistry } from '@tda/llm';
import { addAccountCommands } from './accounts-commands';
import { addBacktestCommands } from './backtest-commands';
import { addEvaluateCommands } from './evaluate-commands';
import { ApiClient, ApiError, type ReplayAnswer } from './api-client';
import { resolveFirestoreTarget, resolveInfraTarget, type ApiTarget } from './cli-config';
import { CliError } from './cli-error';
import { assertGoogleCredentials, type CredentialsLookup } from './google-credentials';
import { runInfraApply, type InfraApplyFlags } from './infra-command';
import { runInfraRender, type InfraRenderFlags } from './infra-render';
import { renderSeedTable, seedLlmRegistry } from './llm-seed';
import { fetchReports, renderReport, ReportError, selectReportSteps } from './report-view';
import { addRecommendCommand, normalizeAsOf } from './recommend-command';
import { addIdentityCommands } from './identity-commands';
import { addIndexCommands } from './reports-commands';
import { artifactUris, renderRun } from './run-view';
import { addScheduleCommands } from './schedule-commands';
import { watchRun } from './watch';

export interface CliIo {
  stdout: { write(text: string): boolean; isTTY?: boolean };
  stderr: { write(text: string): boolean };
  /** Resolves where the API is (env or the local stack); injectable for tests. */
  target: () => ApiTarget;
  watchIntervalMs?: number;
  /** Environment for commands that read config themselves (`tda llm seed`, `tda infra`); default: the process's. */
  env?: EnvSource;
  /** Where `tda infra` looks for deploy/ (default: the CLI's directory, then the cwd). */
  deploySearchFrom?: readonly string[];
  /** How `tda llm seed` finds Google credentials (default: Application Default Credentials). */
  findCredentials?: CredentialsLookup;
}

function print(io: CliIo, lines: string[] | string): void {
  io.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) {
    throw new CliError('INVALID_REQUEST', '--limit must be 1..100');
  }
  return n;
}

/** `value` as one POSIX shell word: as it is when that is safe, else single-quoted. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The flags of `tda list` that select runs; a next page must repeat them (same query, next cursor). */
const LIST_FILTER_FLAGS = ['status', 'flow', 'owner', 'limit'] as const;

/**
 * The command printed for the next page: every filter flag given on this command line (in a
 * fixed order) plus the cursor. The cursor continues one query: without the filters the next
 * page would be a different listing.
 */
function nextPageCommand(
  opts: Record<string, unknown>,
  given: (flag: string) => boolean,
  cursor: string,
): string {
  const words = ['tda', 'list'];
  for (const flag of LIST_FILTER_FLAGS) {
    const value = opts[flag];
    if (value !== undefined && given(flag)) words.push(`--${flag}`, shellWord(String(value)));
  }
  words.push('--cursor', shellWord(cursor));
  return words.join(' ');
}

/** The exit code one invocation decided (not the global process.exitCode: tests run many). */
export interface CliOutcome {
  exitCode: number;
}

/** The `tda` command line: a thin client of the orchestrator API. */
/** What every command needs: the terminal, the exit code to set and the API client. */
interface CliContext {
  io: CliIo;
  outcome: CliOutcome;
  client(): ApiClient;
}

export function buildCli(io: CliIo, outcome: CliOutcome = { exitCode: 0 }): Command {
  const client = (): ApiClient => {
    const target = io.target();
    return new ApiClient({
      baseUrl: target.baseUrl,
      token: target.token,
      ...(target.identityToken === undefined ? {} : { identityToken: target.identityToken }),
    });
  };
  const program = new Command('tda')
    .description(
      'TDA flow runs: trigger, watch, inspect, cancel, retry, rerun, replay, read reports; seed the LLM registry',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  const ctx: CliContext = { io, outcome, client };
  for (const add of [
    addRunCommands,
    addInspectCommands,
    addRecoveryCommands,
    addReplayCommands,
    addReportCommand,
    addIndexCommands,
    addRecommendCommand,
    addLlmCommands,
    addInfraCommands,
    addAccountCommands,
    addIdentityCommands,
    addSchedules,
    addBacktestCommands,
    addEvaluateCommands,
  ]) {
    add(program, ctx);
  }
  return program;
}

/** `schedule …` and `signals`; `schedule fire --watch` follows the run as `run --watch` does. */
function addSchedules(program: Command, ctx: CliContext): void {
  addScheduleCommands(program, { ...ctx, follow: (api, runId) => followToEnd(ctx, api, runId) });
}

/** `run` (trigger, optionally watch) and `flows`. */
function addRunCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command('run')
    .description('trigger a run of a flow')
    .argument('<flowKey>', 'e.g. scheduled_month_week_report_v1 (see `tda flows`)')
    .requiredOption('-s, --symbol <symbol>', 'trading symbol, e.g. BTC-USDT')
    .option('-t, --timeframes <list>', 'comma-separated timeframes (flows that take them)')
    .option('--as-of <time>', 'the moment the run describes (RFC 3339); default: the newest candle')
    .option('-a, --account <accountId>', 'the account to size against (flows that take one)')
    .option('--report-ids <list>', 'comma-separated report ids (aggregated_report_v1)')
    .option('-k, --idempotency-key <key>', 'the same key returns the existing run')
    .option('--deadline-seconds <n>', 'run timeout in seconds')
    .option('-w, --watch', 'follow the run until it finishes')
    .option('--json', 'print the run document as JSON')
    .action(async (flowKey: string, opts: Record<string, string | boolean | undefined>) => {
      const request: TriggerRequest = {
        flowKey,
        scope: {
          symbol: String(opts['symbol']),
          ...(typeof opts['timeframes'] === 'string'
            ? { timeframes: opts['timeframes'].split(',').map((t) => t.trim()) as never }
            : {}),
          ...(typeof opts['asOf'] === 'string' ? { asOf: normalizeAsOf(opts['asOf']) } : {}),
          ...(typeof opts['account'] === 'string' ? { accountId: opts['account'] } : {}),
          ...(typeof opts['reportIds'] === 'string'
            ? { reportIds: opts['reportIds'].split(',').map((t) => t.trim()) }
            : {}),
        },
        ...(typeof opts['idempotencyKey'] === 'string'
          ? { idempotencyKey: opts['idempotencyKey'] }
          : {}),
        ...(typeof opts['deadlineSeconds'] === 'string'
          ? { deadlineSeconds: Number(opts['deadlineSeconds']) }
          : {}),
      };
      const api = ctx.client();
      const { run, created } = await api.trigger(request);
      await report(
        ctx,
        api,
        run,
        `${created ? 'created' : 'existing run (idempotency key)'} ${run.runId}`,
        {
          json: opts['json'] === true,
          watch: opts['watch'] === true,
        },
      );
    });

  program
    .command('flows')
    .description('list the flows that can be triggered')
    .action(async () => {
      print(io, JSON.stringify(await ctx.client().flows(), null, 2));
    });
}

/** `get`, `watch`, `list`. */
function addInspectCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command('get')
    .description('show a run')
    .argument('<runId>')
    .option('--json', 'print the run document as JSON')
    .action(async (runId: string, opts: { json?: boolean }) => {
      const run = await ctx.client().getRun(runId);
      print(io, opts.json === true ? JSON.stringify(run, null, 2) : renderRun(run));
      if (opts.json !== true) printArtifacts(io, run);
    });

  program
    .command('watch')
    .description('follow a run until it finishes')
    .argument('<runId>')
    .action(async (runId: string) => {
      await followToEnd(ctx, ctx.client(), runId);
    });

  program
    .command('list')
    .description('list runs, newest first')
    .option('--status <status>', 'PENDING|RUNNING|SUCCEEDED|FAILED|CANCELLED')
    .option('--flow <flowKey>', 'only this flow')
    .option('--owner <ownerId>', 'another owner’s runs (admin: sent as X-TDA-Owner)')
    .option('--limit <n>', 'page size (1..100)', parseLimit, 20)
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (opts: Record<string, string | number | boolean | undefined>, cmd: Command) => {
      const page = await ctx.client().listRuns({
        limit: Number(opts['limit']),
        ...(typeof opts['status'] === 'string' ? { status: opts['status'] } : {}),
        ...(typeof opts['flow'] === 'string' ? { flowKey: opts['flow'] } : {}),
        ...(typeof opts['owner'] === 'string' ? { ownerId: opts['owner'] } : {}),
        ...(typeof opts['cursor'] === 'string' ? { cursor: opts['cursor'] } : {}),
      });
      if (opts['json'] === true) {
        print(io, JSON.stringify(page, null, 2));
        return;
      }
      if (page.runs.length === 0) print(io, 'no runs');
      for (const run of page.runs) {
        const p = run.progress;
        const done =
          p === undefined ? '' : `${p.succeeded + p.failed + p.skipped + p.cancelled}/${p.total}`;
        print(
          io,
          `${run.runId}  ${run.status.padEnd(9)}  ${run.flowKey}  ${done}  ${run.createdAt}`,
        );
      }
      if (page.nextCursor !== null) {
        // A default (--limit 20) is not repeated: the next page gets it anyway.
        const given = (flag: string): boolean => cmd.getOptionValueSource(flag) === 'cli';
        print(io, `next page: ${nextPageCommand(opts, given, page.nextCursor)}`);
      }
    });
}

/** `cancel`, `retry`, `rerun`. */
function addRecoveryCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command('cancel')
    .description('cancel a run (idempotent)')
    .argument('<runId>')
    .action(async (runId: string) => {
      const run = await ctx.client().cancel(runId);
      print(io, `${run.runId} ${run.status}`);
    });

  program
    .command('retry')
    .description(
      'retry a FAILED step of a FAILED run (every FAILED step without <stepId>); the steps its failure cancelled are re-opened',
    )
    .argument('<runId>')
    .argument('[stepId]')
    .option('-w, --watch', 'follow the run until it finishes')
    .option('--json', 'print the run document as JSON')
    .action(async (runId: string, stepId: string | undefined, opts: RecoveryOptions) => {
      const api = ctx.client();
      const run = await api.retry(runId, stepId);
      await report(
        ctx,
        api,
        run,
        `${run.runId} ${run.status} (retried ${stepId ?? 'every FAILED step'})`,
        opts,
      );
    });

  program
    .command('rerun')
    .description(
      'a NEW run from a step: the step and its downstream run again, every other step is reused from the source run',
    )
    .argument('<runId>')
    .requiredOption('--from <stepId>', 'the first step to execute again')
    .option('-w, --watch', 'follow the new run until it finishes')
    .option('--json', 'print the new run document as JSON')
    .action(async (runId: string, opts: RecoveryOptions & { from: string }) => {
      const api = ctx.client();
      const run = await api.rerun(runId, opts.from);
      await report(
        ctx,
        api,
        run,
        `created ${run.runId} (rerun of ${runId} from ${opts.from})`,
        opts,
      );
    });
}

/** `replay`, `snapshot`, `blocked-on`. */
function addReplayCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command('replay')
    .description(
      'seek a step-ready or the step-events subscription to a time or a snapshot (Pub/Sub redelivers); --dry-run lists what would happen',
    )
    .argument('<subscription>', 'e.g. tda-step-ready-llm-report-sub or tda-step-events-sub')
    .option('--time <rfc3339>', 'replay messages published at or after this time')
    .option('--snapshot <name>', 'replay to a snapshot (tda snapshot)')
    .option('--dry-run', 'seek nothing; list the steps that would receive messages')
    .option('--json', 'print the answer as JSON')
    .action(
      async (
        subscription: string,
        opts: { time?: string; snapshot?: string; dryRun?: boolean; json?: boolean },
      ) => {
        const answer = await ctx.client().replay({
          subscription,
          ...(opts.time === undefined ? {} : { time: opts.time }),
          ...(opts.snapshot === undefined ? {} : { snapshot: opts.snapshot }),
          dryRun: opts.dryRun === true,
        });
        if (opts.json === true) {
          print(io, JSON.stringify(answer, null, 2));
          return;
        }
        print(io, renderReplay(answer));
      },
    );

  program
    .command('snapshot')
    .description("snapshot a subscription's ack state now (for tda replay --snapshot)")
    .argument('<subscription>')
    .argument('<name>')
    .action(async (subscription: string, name: string) => {
      print(io, JSON.stringify(await ctx.client().createSnapshot(subscription, name), null, 2));
    });

  program
    .command('blocked-on')
    .description('why a step is not running')
    .argument('<runId>')
    .argument('<stepId>')
    .action(async (runId: string, stepId: string) => {
      const answer = (await ctx.client().blockedOn(runId, stepId)) as { summary?: unknown };
      print(io, typeof answer.summary === 'string' ? answer.summary : '');
      print(io, JSON.stringify(answer, null, 2));
    });
}

/** `report`: the LLM reports of a run. */
function addReportCommand(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  program
    .command('report')
    .description("print a run's LLM reports (summary markdown of each SUCCEEDED LLM_REPORT step)")
    .argument('<runId>')
    .option('--step <stepId>', 'only this LLM_REPORT step')
    .option('--json', 'print the report artifact(s) as JSON (an array; one object with --step)')
    .action(async (runId: string, opts: { step?: string; json?: boolean }) => {
      const api = ctx.client();
      const run = await api.getRun(runId);
      const selection = selectReportSteps(run, opts.step);
      const { reports, failures } = await fetchReports(api, run, selection.stepIds);
      const files = reports.map((r) => r.report);
      if (opts.json === true) {
        // --step names one report: print the object itself, not an array of one.
        const json = opts.step === undefined ? files : files[0];
        if (files.length > 0) print(io, JSON.stringify(json, null, 2));
      } else {
        if (reports.length > 0) {
          print(io, [`${run.runId}  ${run.flowKey}  ${run.scope.symbol}  ${run.status}`, '']);
        }
        for (const report of reports) print(io, renderReport(report));
      }
      if (selection.skipped.length > 0) {
        io.stderr.write(`not shown (not SUCCEEDED): ${selection.skipped.join(', ')}\n`);
      }
      if (failures.length > 0) {
        throw new ReportError(
          'UPSTREAM_UNAVAILABLE',
          `${failures.length} of ${selection.stepIds.length} report(s) could not be shown:\n  ${failures.join('\n  ')}`,
        );
      }
    });
}

/** `llm seed`. */
function addLlmCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  const llm = program.command('llm').description('the LLM prompt/schema registry (Firestore)');
  llm
    .command('seed')
    .description(
      'seed the default prompts and schemas into llm_prompts / llm_schemas (create-only unless --force)',
    )
    .option('--project <id>', 'Google Cloud project (default: GOOGLE_CLOUD_PROJECT)')
    .option('--force', 'replace documents that differ from the seed')
    .option('--dry-run', 'print the plan, write nothing')
    .action(async (opts: { project?: string; force?: boolean; dryRun?: boolean }) => {
      const target = resolveFirestoreTarget(
        io.env,
        opts.project === undefined ? {} : { project: opts.project },
      );
      print(
        io,
        `Firestore project ${target.projectId} (${
          target.emulatorHost === undefined
            ? 'Google Cloud, Application Default Credentials'
            : `emulator ${target.emulatorHost}`
        })`,
      );
      if (target.emulatorHost === undefined) {
        await assertGoogleCredentials(`Firestore project ${target.projectId}`, io.findCredentials);
      }
      const firestore = createFirestore(target);
      try {
        const dryRun = opts.dryRun === true;
        const rows = await seedLlmRegistry(new FirestorePromptRegistry(firestore), {
          force: opts.force === true,
          dryRun,
        });
        print(io, renderSeedTable(rows, dryRun));
      } finally {
        await firestore.terminate();
      }
    });
}

/** `infra apply`, `infra plan`, `infra render`. */
function addInfraCommands(program: Command, ctx: CliContext): void {
  const { io } = ctx;
  const deploySearchFrom = io.deploySearchFrom ?? [__dirname, process.cwd()];
  const infra = program
    .command('infra')
    .description('Google Cloud resources of a deploy environment (deploy/environments.json)');
  const infraCommand = (name: string, description: string, forceDryRun: boolean): void => {
    const command = infra
      .command(name)
      .description(description)
      .option('--project <id>', 'the environment of this project')
      .option('--profile <name>', 'the environment of this skaffold profile (dev, prod)')
      .option('--region <region>', "override the environment's region");
    if (!forceDryRun) command.option('--dry-run', 'read and compare only; write nothing');
    command
      .option('--environments <file>', 'environments file (default: deploy/environments.json)')
      .action(async (opts: InfraApplyFlags) => {
        await runInfraApply(
          { ...opts, dryRun: forceDryRun || opts.dryRun === true },
          {
            print: (lines) => print(io, lines),
            target: resolveInfraTarget(io.env),
            searchFrom: deploySearchFrom,
          },
        );
      });
  };
  infraCommand(
    'apply',
    'create or update the project resources (service accounts, bucket, secrets, image repository, Pub/Sub, IAM, Firestore, Cloud Scheduler) and print the plan; never deletes',
    false,
  );
  infraCommand('plan', 'the same as `infra apply --dry-run`', true);
  infra
    .command('render')
    .description(
      "regenerate deploy/cloudrun/<profile>/*.yaml, skaffold.yaml and the services' Dockerfile/project.json from the deployment model and deploy/environments.json",
    )
    .option('--check', 'write nothing; exit 1 when a generated file is out of date')
    .action((opts: InfraRenderFlags) => {
      runInfraRender(opts, {
        print: (lines) => print(io, lines),
        searchFrom: deploySearchFrom,
      });
    });
}

interface RecoveryOptions {
  watch?: boolean;
  json?: boolean;
}

/** The run as JSON (`--json`), or its line; with `--watch` followed to the end. */
async function report(
  ctx: CliContext,
  api: ApiClient,
  run: FlowRun,
  line: string,
  opts: RecoveryOptions,
): Promise<void> {
  if (opts.json === true && opts.watch !== true) {
    print(ctx.io, JSON.stringify(run, null, 2));
    return;
  }
  print(ctx.io, line);
  if (opts.watch === true) await followToEnd(ctx, api, run.runId);
}

/** Watches a run until it ends, prints its artifacts; exit code 1 unless it SUCCEEDED. */
async function followToEnd(ctx: CliContext, api: ApiClient, runId: string): Promise<void> {
  const { io } = ctx;
  const final = await watchRun(api, runId, {
    out: io.stdout,
    note: (text) => io.stderr.write(`${text}\n`),
    ...(io.watchIntervalMs === undefined ? {} : { intervalMs: io.watchIntervalMs }),
  });
  printArtifacts(io, final);
  if (final.status !== 'SUCCEEDED') ctx.outcome.exitCode = 1;
}

/** One header line (what was done, counts), then one line per step / run with its decision. */
export function renderReplay(answer: ReplayAnswer): string {
  const counts = Object.entries(answer.counts)
    .map(([decision, n]) => `${decision} ${n}`)
    .join(', ');
  const lines = [
    `${answer.dryRun ? 'dry run' : answer.seeked ? 'sought' : 'not sought'}: ${answer.subscription} (messages since ${answer.since}); ${counts === '' ? 'nothing would be redelivered' : counts}`,
  ];
  for (const step of answer.steps ?? [])
    lines.push(`  ${step.runId}  ${step.stepId}  ${step.summary}`);
  for (const run of answer.runs ?? []) {
    lines.push(`  ${run.runId}  ${run.events.length} event(s)  ${run.summary}`);
  }
  if (answer.truncated) lines.push(`  (only the newest ${answer.scannedRuns} runs were looked at)`);
  lines.push(`note: ${answer.note}`);
  return lines.join('\n');
}

function printArtifacts(io: CliIo, run: Parameters<typeof artifactUris>[0]): void {
  const uris = artifactUris(run);
  if (uris.length === 0) return;
  print(io, 'artifacts:');
  for (const { stepId, uri } of uris) print(io, `  ${stepId}  ${uri}`);
}

/** Runs the CLI; returns the process exit code. Errors become one clear line on stderr. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    const outcome: CliOutcome = { exitCode: 0 };
    await buildCli(io, outcome).parseAsync(argv, { from: 'user' });
    return outcome.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode;
    }
    if (error instanceof ApiError) {
      io.stderr.write(
        `error ${error.code}${error.status > 0 ? ` (HTTP ${error.status})` : ''}: ${error.message}\n`,
      );
      if (Object.keys(error.details).length > 0) {
        io.stderr.write(`${JSON.stringify(error.details, null, 2)}\n`);
      }
      return 1;
    }
    if (isTdaError(error)) {
      io.stderr.write(`error ${error.code}: ${error.message}\n`);
      return 1;
    }
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
