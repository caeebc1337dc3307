import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { FlowRun, TriggerRequest } from '@tda/contracts';
import { createLogger } from '@tda/observability';
import { ApiClient } from '@tda/service-cli';
import { startLocalStack } from '@tda/service-local-stack';
import { latencyStats, type LatencyStats } from '../bench-kit';

export interface StepDurationRow extends LatencyStats {
  stepType: string;
  steps: number;
}

const REPORT: TriggerRequest = {
  flowKey: 'user_multi_tf_report_v1',
  scope: { symbol: 'BTC-USDT', timeframes: ['1d'] },
};

async function untilEnded(api: ApiClient, runId: string): Promise<FlowRun> {
  for (let i = 0; i < 1_200; i += 1) {
    const run = await api.getRun(runId);
    if (run.status === 'SUCCEEDED') return run;
    if (run.status === 'FAILED' || run.status === 'CANCELLED')
      throw new Error(`run ${runId} ended ${run.status}`);
    await delay(50);
  }
  throw new Error(`run ${runId} did not end within 60 s`);
}

/**
 * Step durations (claim → finalize, as each worker records them) of `runs` report runs through
 * `npm start`'s composition in memory, with the offline analyst as the model: it answers at once,
 * so an LLM step's duration is TDA's own overhead (prompt, chart images, structured-output
 * checks, artifacts).
 */
export async function llmStepOverhead(runs: number): Promise<StepDurationRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tda-bench-llm-'));
  const stack = await startLocalStack({
    env: {
      TDA_BACKEND: 'memory',
      PORT: '0',
      TDA_DATA_DIR: dataDir,
      TDA_RECONCILE_INTERVAL_MS: '0',
      TDA_SCHEDULE_TICK_MS: '0',
    },
    loggerFor: (service) =>
      createLogger({ service, level: 'warn', destination: { write: () => undefined } }),
  });
  try {
    const api = new ApiClient({ baseUrl: stack.url, token: stack.token });
    const durations = new Map<string, number[]>();
    for (let i = 0; i < runs; i += 1) {
      const run = await untilEnded(
        api,
        (await api.trigger({ ...REPORT, idempotencyKey: `bench-llm-${i}` })).run.runId,
      );
      for (const step of Object.values(run.steps)) {
        const ms = step.outputs.execution?.timing?.durationMs;
        if (ms === undefined) continue;
        durations.set(step.stepType, [...(durations.get(step.stepType) ?? []), ms]);
      }
    }
    return [...durations].map(([stepType, values]) => ({
      stepType,
      steps: values.length,
      ...latencyStats(values),
    }));
  } finally {
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
