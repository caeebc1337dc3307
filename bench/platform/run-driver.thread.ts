import { parentPort } from 'node:worker_threads';
import type { RunScope } from '@tda/contracts';
import { ApiClient } from '@tda/service-cli';

/** Main thread → driver: run a batch, or a run has ended. */
export type DriverRequest =
  | {
      kind: 'batch';
      /** The stack to drive (each platform stack has its own). */
      api: { baseUrl: string; token: string };
      request: { flowKey: string; scope: RunScope };
      total: number;
      concurrency: number;
      timeoutMs: number;
    }
  | { kind: 'ended'; runIds: string[] };

/** Driver → main thread: the batch's runs, in trigger order, or why it stopped. */
export type DriverReply = { kind: 'done'; runIds: string[] } | { kind: 'failed'; message: string };

const ended = new Set<string>();
const waiting = new Map<string, () => void>();

function untilEnded(runId: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ended.delete(runId)) return resolve();
    const timer = setTimeout(
      () => reject(new Error(`run ${runId} did not end within ${timeoutMs} ms`)),
      timeoutMs,
    );
    waiting.set(runId, () => {
      clearTimeout(timer);
      waiting.delete(runId);
      resolve();
    });
  });
}

async function runBatch(batch: Extract<DriverRequest, { kind: 'batch' }>) {
  const api = new ApiClient(batch.api);
  const runIds: string[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < batch.total) {
      next += 1;
      const { run } = await api.trigger(batch.request);
      runIds.push(run.runId);
      await untilEnded(run.runId, batch.timeoutMs);
    }
  };
  await Promise.all(Array.from({ length: Math.min(batch.concurrency, batch.total) }, lane));
  return runIds;
}

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', (message: DriverRequest) => {
    if (message.kind === 'ended') {
      for (const runId of message.runIds) {
        const wake = waiting.get(runId);
        if (wake === undefined) ended.add(runId);
        else wake();
      }
      return;
    }
    ended.clear();
    runBatch(message).then(
      (runIds) => port.postMessage({ kind: 'done', runIds } satisfies DriverReply),
      (error: unknown) =>
        port.postMessage({
          kind: 'failed',
          message: error instanceof Error ? error.message : String(error),
        } satisfies DriverReply),
    );
  });
}
