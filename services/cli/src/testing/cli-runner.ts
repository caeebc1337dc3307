import { runCli, type CliIo } from '../cli';

/** The token the command specs' fake API servers expect. */
export const TEST_TOKEN = 'test-token-0123456789';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * The CLI run in process against a fake API (`baseUrl` is read per call: the server starts in a
 * beforeAll), stdout and stderr captured per call, the token from the "env".
 */
export function cliRunner(
  baseUrl: () => string,
  options: { watchIntervalMs?: number; isTTY?: boolean } = {},
): (...argv: string[]) => Promise<CliRun> {
  return async (...argv) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      stdout: { write: (t: string) => out.push(t) > 0, ...(options.isTTY ? { isTTY: true } : {}) },
      stderr: { write: (t: string) => err.push(t) > 0 },
      target: () => ({ baseUrl: baseUrl(), token: TEST_TOKEN, source: 'env' }),
      ...(options.watchIntervalMs === undefined
        ? {}
        : { watchIntervalMs: options.watchIntervalMs }),
    };
    const code = await runCli(argv, io);
    return { code, out: out.join(''), err: err.join('') };
  };
}
