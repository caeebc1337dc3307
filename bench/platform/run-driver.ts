import { performance } from 'node:perf_hooks';
import type { RunScope } from '@tda/contracts';
import type { PlatformStack } from './platform-stack';

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export interface BatchResult {
  runIds: string[];
  /** First trigger sent → last run's terminal status committed. */
  seconds: number;
  /** Terminal status → runs. */
  outcomes: Record<string, number>;
}

/**
 * Runs `total` runs of one flow through POST /runs, `concurrency` at a time: a new run is
 * triggered as soon as one ends (its terminal status committed by the orchestrator, seen in the
 * call log — no polling). Rejects when a run has not ended within `timeoutMs`.
 */
export async function runBatch(
  platform: PlatformStack,
  request: { flowKey: string; scope: RunScope },
  total: number,
  concurrency: number,
  timeoutMs = 120_000,
): Promise<BatchResult> {
  const ended = new Map<string, string>();
  const waiting = new Map<string, () => void>();
  platform.log.onRunStatus = (runId, status) => {
    if (typeof status !== 'string' || !TERMINAL.has(status)) return;
    ended.set(runId, status);
    waiting.get(runId)?.();
  };
  const untilEnded = (runId: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (ended.has(runId)) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`run ${runId} did not end within ${timeoutMs} ms`)),
        timeoutMs,
      );
      waiting.set(runId, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  const runIds: string[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < total) {
      next += 1;
      const { run } = await platform.api.trigger(request);
      runIds.push(run.runId);
      await untilEnded(run.runId);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
  } finally {
    platform.log.onRunStatus = () => undefined;
  }
  const outcomes: Record<string, number> = {};
  for (const runId of runIds) {
    const status = ended.get(runId) ?? 'UNKNOWN';
    outcomes[status] = (outcomes[status] ?? 0) + 1;
  }
  return { runIds, seconds: (performance.now() - started) / 1000, outcomes };
}
