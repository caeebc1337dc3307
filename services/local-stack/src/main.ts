import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { processEnv } from '@tda/config';
import { RECOMMENDATION_FLOW_KEY } from '@tda/flow-engine';
import { createLogger, type Logger } from '@tda/observability';
import { runDemo } from './demo';
import { runDemoSchedule } from './demo-schedule';
import { loadLocalStackConfig } from './local-stack.config';
import { startLocalStack, type LocalStack } from './local-stack';
import { ensureConsoleBuilt, type ConsoleBuild } from './console-build';

type LocalStackConfig = ReturnType<typeof loadLocalStackConfig>;
type Out = NodeJS.WriteStream;

/** One pino logger per service, all writing JSON lines to the stack's log file. */
function fileLoggers(
  config: LocalStackConfig,
  logFile: string,
): { loggerFor: (service: string) => Logger; flush: () => void } {
  const destination = pino.destination({ dest: logFile, append: true, sync: false });
  const loggers = new Map<string, Logger>();
  const loggerFor = (service: string): Logger => {
    const existing = loggers.get(service);
    if (existing !== undefined) return existing;
    const logger = createLogger({ service, level: config.TDA_LOG_LEVEL, destination });
    loggers.set(service, logger);
    return logger;
  };
  return { loggerFor, flush: () => destination.flushSync() };
}

/** What a new user needs: the console, API, tokens, log file and a first CLI command. */
function banner(stack: LocalStack, consoleBuild: ConsoleBuild, logFile: string): string {
  return [
    ...stack.description.map((line) => `  ${line}`),
    consoleBuild.dir === undefined
      ? `  console   not served (${consoleBuild.reason})`
      : `  console   ${stack.url}/   (open it and sign in with the token below)`,
    `  API       ${stack.url}   (docs ${stack.url}/docs, OpenAPI ${stack.url}/openapi.json)`,
    `  sign in   ${stack.adminToken}   (admin of owner ${stack.adminOwner}: the console's sign-in, or TDA_API_TOKEN; revoked on exit)`,
    `  operator  ${stack.token}   (in ${join(stack.dataDir, 'local-api.json')}; the CLI reads it)`,
    `  logs      ${logFile}`,
    `  CLI       npx tda list | npx tda run market_charts_v1 --symbol ETH-USDT --watch`,
    '',
  ].join('\n');
}

/** The demo run and, after a recommendation, the demo schedule (flow 7). */
async function demo(
  stack: LocalStack,
  config: LocalStackConfig,
  out: Out,
  signal: AbortSignal,
): Promise<void> {
  const final = await runDemo({
    url: stack.url,
    token: stack.token,
    flowKey: config.TDA_DEMO_FLOW,
    symbol: config.TDA_DEMO_SYMBOL,
    accountId: config.TDA_DEMO_ACCOUNT,
    dataDir: stack.dataDir,
    artifacts: stack.backends.artifacts,
    out,
    signal,
  });
  out.write(`\ndemo run finished: ${final.status}\n`);
  if (final.status !== 'SUCCEEDED') {
    process.exitCode = 1;
    return;
  }
  if (final.flowKey !== RECOMMENDATION_FLOW_KEY) return;
  await runDemoSchedule({
    url: stack.url,
    token: stack.token,
    symbol: config.TDA_DEMO_SYMBOL,
    accountId: config.TDA_DEMO_ACCOUNT,
    demoRun: final,
    out,
    signal,
  }).catch((error: unknown) =>
    out.write(`demo schedule failed: ${error instanceof Error ? error.message : String(error)}\n`),
  );
}

/**
 * `npm start`: the whole TDA stack in one process, a demo run with live progress, then the API
 * keeps serving until Ctrl-C. Service logs (JSON, Cloud Logging shape) go to a file so the
 * terminal shows the progress; the banner says where.
 */
async function main(): Promise<void> {
  const env = processEnv();
  const config = loadLocalStackConfig(env);
  const logDir = join(resolve(config.TDA_DATA_DIR), 'logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'local-stack.log');
  const logs = fileLoggers(config, logFile);
  const out = process.stdout;
  out.write('TDA local stack starting...\n');
  // The console of this checkout, built when its sources changed (skipped if TDA_CONSOLE_DIR is set).
  const consoleBuild: ConsoleBuild =
    config.TDA_CONSOLE_DIR === undefined
      ? ensureConsoleBuilt(resolve(__dirname, '../../..'), (line) => out.write(`  ${line}\n`))
      : { dir: config.TDA_CONSOLE_DIR };
  const stackEnv =
    consoleBuild.dir === undefined ? env : { ...env, TDA_CONSOLE_DIR: consoleBuild.dir };
  const stack = await startLocalStack({ env: stackEnv, loggerFor: logs.loggerFor });
  out.write(banner(stack, consoleBuild, logFile));

  const controller = new AbortController();
  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      controller.abort();
      out.write(`\nstopping (${reason})...\n`);
      await stack.close();
      logs.flush();
      out.write('stopped\n');
    })();
    return stopping;
  };
  process.once('SIGINT', () => void stop('Ctrl-C'));
  process.once('SIGTERM', () => void stop('SIGTERM'));

  if (config.TDA_DEMO) {
    await demo(stack, config, out, controller.signal);
    if (config.TDA_EXIT_AFTER_DEMO) {
      await stop('TDA_EXIT_AFTER_DEMO');
      return;
    }
  }
  if (!controller.signal.aborted) out.write(`\nserving ${stack.url} — Ctrl-C to stop\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `local stack failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exitCode = 1;
});
