import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { RunScope } from '@tda/contracts';
import type { CallLog } from './recording-adapters';
import type { DriverReply, DriverRequest } from './run-driver.thread';

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export interface BatchResult {
  runIds: string[];
  /** First trigger sent → last run's terminal status committed. */
  seconds: number;
  /** Terminal status → runs. */
  outcomes: Record<string, number>;
}

/**
 * The bench's client, in its own thread: it sends POST /runs over HTTP like any client, so the
 * client's work (fetch, JSON) is not counted against the event loop the platform part measures
 * ("on one core" is TDA's core, not the load generator's). It learns that a run ended from the
 * call log (its terminal status committed, no polling), relayed by the main thread. One thread
 * per process, started on first use and kept (unreferenced when idle): a second thread loading
 * SWC's native binding after the first was terminated crashed the process.
 */
export class RunDriver {
  private static thread: Worker | undefined;
  private static pending: {
    resolve: (reply: DriverReply) => void;
    reject: (e: Error) => void;
  } | null = null;

  constructor(
    private readonly api: { baseUrl: string; token: string },
    private readonly log: CallLog,
  ) {}

  /**
   * Runs `total` runs of one flow through POST /runs, `concurrency` at a time: a new run is
   * triggered as soon as one ends. Rejects when a run has not ended within `timeoutMs`.
   */
  async runBatch(
    request: { flowKey: string; scope: RunScope },
    total: number,
    concurrency: number,
    timeoutMs = 120_000,
  ): Promise<BatchResult> {
    const worker = this.worker();
    const ended = new Map<string, string>();
    // Runs that ended this turn, told in one message: a postMessage per run was a per cent of
    // the loop being measured.
    let unsent: string[] = [];
    const send = (): void => {
      worker.postMessage({ kind: 'ended', runIds: unsent } satisfies DriverRequest);
      unsent = [];
    };
    this.log.onRunStatus = (runId, status) => {
      if (typeof status !== 'string' || !TERMINAL.has(status)) return;
      ended.set(runId, status);
      if (unsent.push(runId) === 1) setImmediate(send);
    };
    const onMessage = (reply: DriverReply): void => this.settle((p) => p.resolve(reply));
    const onError = (error: Error): void => this.settle((p) => p.reject(error));
    const onExit = (code: number): void =>
      this.settle((p) => p.reject(new Error(`the bench's driver thread exited (${code})`)));
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.ref();
    const started = performance.now();
    try {
      const reply = await new Promise<DriverReply>((resolve, reject) => {
        RunDriver.pending = { resolve, reject };
        const batch: DriverRequest = {
          kind: 'batch',
          api: this.api,
          request,
          total,
          concurrency,
          timeoutMs,
        };
        worker.postMessage(batch);
      });
      if (reply.kind === 'failed') throw new Error(`bench driver: ${reply.message}`);
      const seconds = (performance.now() - started) / 1000;
      const outcomes: Record<string, number> = {};
      for (const runId of reply.runIds) {
        const status = ended.get(runId) ?? 'UNKNOWN';
        outcomes[status] = (outcomes[status] ?? 0) + 1;
      }
      return { runIds: reply.runIds, seconds, outcomes };
    } finally {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      worker.unref();
      this.log.onRunStatus = () => undefined;
    }
  }

  private worker(): Worker {
    if (RunDriver.pending !== null) throw new Error('one batch at a time');
    if (RunDriver.thread === undefined) {
      const thread = new Worker(join(__dirname, 'run-driver.thread.js'));
      thread.on('exit', () => {
        RunDriver.thread = undefined;
      });
      thread.unref();
      RunDriver.thread = thread;
      return thread;
    }
    return RunDriver.thread;
  }

  private settle(how: (pending: NonNullable<(typeof RunDriver)['pending']>) => void): void {
    const pending = RunDriver.pending;
    RunDriver.pending = null;
    if (pending !== null) how(pending);
  }
}
