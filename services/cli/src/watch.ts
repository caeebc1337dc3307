import { setTimeout as sleep } from 'node:timers/promises';
import type { FlowRun } from '@tda/contracts';
import type { ApiClient } from './api-client';
import { CliError } from './cli-error';
import { isTerminalRun, renderRun } from './run-view';

export interface WatchOptions {
  intervalMs?: number;
  /** Give up after this long (the run keeps going on the server). */
  timeoutMs?: number;
  /** Where to draw; a TTY gets an in-place redraw, anything else one block per change. */
  out?: NodeJS.WriteStream | { write(text: string): boolean; isTTY?: boolean };
  signal?: AbortSignal;
}

/** Polls a run until it is terminal, drawing its progress; returns the final run. */
export async function watchRun(
  client: ApiClient,
  runId: string,
  options: WatchOptions = {},
): Promise<FlowRun> {
  const out = options.out ?? process.stdout;
  const interval = options.intervalMs ?? 500;
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  let drawnLines = 0;
  let lastBlock = '';
  for (;;) {
    const run = await client.getRun(runId);
    const lines = renderRun(run);
    const block = lines.join('\n');
    if (out.isTTY === true) {
      // Move up over the previous frame and clear it, then draw the new one.
      if (drawnLines > 0) out.write(`\u001b[${drawnLines}F\u001b[0J`);
      out.write(`${block}\n`);
      drawnLines = lines.length;
    } else {
      // Non-interactive: print only when something other than elapsed time changed.
      const stable = block.replace(/\d+\.\ds/g, '');
      if (stable !== lastBlock) {
        out.write(`${block}\n\n`);
        lastBlock = stable;
      }
    }
    if (isTerminalRun(run)) return run;
    if (Date.now() > deadline) {
      throw new CliError('CONFLICT', `run ${runId} is still ${run.status} after the watch timeout`);
    }
    if (options.signal?.aborted === true) return run;
    await sleep(interval, undefined, options.signal ? { signal: options.signal } : undefined).catch(
      () => undefined,
    );
  }
}
