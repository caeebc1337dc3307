import { setTimeout as sleep } from 'node:timers/promises';
import type { FlowRun } from '@tda/contracts';
import { ApiError, type ApiClient } from './api-client';
import { CliError } from './cli-error';
import { isTerminalRun, renderRun } from './run-view';
import { readServerEvents } from './sse-client';

/** Polling period when the live stream is not available. */
export const WATCH_POLL_MS = 5_000;

export interface WatchOptions {
  /** Polling period when the stream is unavailable (default WATCH_POLL_MS). */
  intervalMs?: number;
  /** Give up after this long (the run keeps going on the server). */
  timeoutMs?: number;
  /** Where to draw; a TTY gets an in-place redraw, anything else one block per change. */
  out?: NodeJS.WriteStream | { write(text: string): boolean; isTTY?: boolean };
  /** Where the one-line note about falling back to polling goes (default: stderr). */
  note?: (text: string) => void;
  signal?: AbortSignal;
}

type Out = NonNullable<WatchOptions['out']>;

/** Draws a run: in place on a TTY, else one block whenever something but elapsed time changed. */
function drawer(out: Out): (run: FlowRun) => void {
  let drawnLines = 0;
  let lastBlock = '';
  return (run) => {
    const lines = renderRun(run);
    const block = lines.join('\n');
    if (out.isTTY === true) {
      // Move up over the previous frame and clear it, then draw the new one.
      if (drawnLines > 0) out.write(`\u001b[${drawnLines}F\u001b[0J`);
      out.write(`${block}\n`);
      drawnLines = lines.length;
      return;
    }
    const stable = block.replace(/\d+\.\ds/g, '');
    if (stable !== lastBlock) {
      out.write(`${block}\n\n`);
      lastBlock = stable;
    }
  };
}

/** Why the stream cannot be used: these fall back to polling; anything else is the run's error. */
function streamUnavailable(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  if (error.status === 401 || error.status === 403) return undefined;
  return `${error.code}: ${error.message}`;
}

/**
 * Follows a run until it is terminal, drawing its progress; returns the final run. Live: the
 * run's event stream (GET /runs/{runId}/events), reconnecting with Last-Event-ID when the server
 * ends it; when the stream is unavailable (an older server, a proxy, the per-owner stream limit)
 * it says so once and polls GET /runs/{runId} every 5 s.
 */
export async function watchRun(
  client: ApiClient,
  runId: string,
  options: WatchOptions = {},
): Promise<FlowRun> {
  const draw = drawer(options.out ?? process.stdout);
  const timeoutMs = options.timeoutMs ?? 30 * 60_000;
  const stop = AbortSignal.any([
    AbortSignal.timeout(timeoutMs),
    ...(options.signal === undefined ? [] : [options.signal]),
  ]);
  let run = await client.getRun(runId);
  draw(run);
  let lastEventId: string | undefined;
  let live = true;
  while (!isTerminalRun(run) && !stop.aborted) {
    if (live) {
      try {
        const body = await client.openEventStream(`/runs/${encodeURIComponent(runId)}/events`, {
          ...(lastEventId === undefined ? {} : { lastEventId }),
          signal: stop,
        });
        for await (const event of readServerEvents(body)) {
          lastEventId = event.id ?? lastEventId;
          run = await client.getRun(runId);
          draw(run);
          if (isTerminalRun(run)) return run;
        }
      } catch (error) {
        if (stop.aborted) break;
        const reason = streamUnavailable(error);
        if (reason === undefined) throw error;
        (options.note ?? ((t: string) => process.stderr.write(`${t}\n`)))(
          `live events unavailable (${reason}); polling every ${String((options.intervalMs ?? WATCH_POLL_MS) / 1000)} s`,
        );
        live = false;
      }
    } else {
      await sleep(options.intervalMs ?? WATCH_POLL_MS, undefined, { signal: stop }).catch(
        () => undefined,
      );
    }
    if (!stop.aborted) {
      run = await client.getRun(runId);
      draw(run);
    }
  }
  if (!isTerminalRun(run) && options.signal?.aborted !== true) {
    throw new CliError('CONFLICT', `run ${runId} is still ${run.status} after the watch timeout`);
  }
  return run;
}
