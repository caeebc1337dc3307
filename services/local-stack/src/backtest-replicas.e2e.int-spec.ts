import { resolve } from 'node:path';
import { processEnv } from '@tda/config';
import type { FlowRun, RunScope } from '@tda/contracts';
import type { BacktestJobRequest } from '@tda/service-cli';
import { emulatorEndpoints, expectEventually } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';
import { WorkerProcess, type LogRecord } from './testing/worker-process';

/**
 * Seed 003's replicas and worker death, with the real BACKTEST service: two worker processes
 * (services/worker-backtest/src/main.ts, as Cloud Run would start two instances) on the stack's
 * Pub/Sub and Firestore emulators. Two jobs run at once, one on each, each executed once; a
 * worker SIGKILLed in the middle of stage B leaves its lease behind, the reconciler hands the
 * step to the other replica once the lease has expired, and the job still ends terminal.
 */
const REPO = resolve(__dirname, '../../..');
const MAIN = 'services/worker-backtest/src/main.ts';
const STEP = 'backtest:1h';
const range = (from: number, n: number, step = 1) =>
  Array.from({ length: n }, (_, i) => from + i * step);

/** 100 base variants × 100 executions × `fees` fee levels, every base shortlisted. */
function grid(fees: number): RunScope {
  return {
    symbol: 'BTC-USDT',
    asOf: '2026-09-20T00:00:00Z',
    timeframe: '1h',
    bars: 5_000,
    strategy: {
      kind: 'ma_cross',
      ma: 'ema',
      params: { fast: range(3, 10), slow: range(20, 10, 5) },
    },
    execution: {
      direction: ['long_only', 'long_short'],
      stopLossPct: [0, 1, 2, 3, 5],
      takeProfitPct: [0, 2, 4, 8, 16],
      trailingStopPct: [0, 3],
      feeBps: range(0, fees),
    },
    top_k: 5,
    preselect: 100,
    top_trades_n: 1,
  };
}

interface Execution {
  pid: number;
  attempt: number;
  claimedAt: number;
  finishedAt?: number;
}

/** When a JSON log line was written (ms since the epoch). */
const at = (record: LogRecord) => Date.parse(String(record['time'] ?? record['timestamp']));

/** Each process's claims and finalizes of a run's backtest step, from its JSON log lines. */
function executionsOf(workers: readonly WorkerProcess[], runId: string): Execution[] {
  const mine = (record: LogRecord) => record['runId'] === runId && record['stepId'] === STEP;
  return workers.flatMap((worker) =>
    worker
      .withEvent('step_claimed')
      .filter(mine)
      .map((claim) => {
        const done = worker.withEvent('step_succeeded').find(mine);
        return {
          pid: worker.pid,
          attempt: Number(claim['attempt']),
          claimedAt: at(claim),
          ...(done === undefined ? {} : { finishedAt: at(done) }),
        };
      }),
  );
}

/**
 * The attempts among `later` (sorted, on `worker`) that were followed by another attempt without
 * the worker logging a warning or an error about the run in between: a re-execution nobody can
 * explain from the logs.
 */
function unexplainedRetries(worker: WorkerProcess, runId: string, later: Execution[]): number[] {
  const warned = worker.logs
    .filter((r) => r['runId'] === runId && r['severity'] !== 'INFO' && r['severity'] !== 'DEBUG')
    .map(at);
  return later.slice(0, -1).flatMap((execution, i) => {
    const next = later[i + 1]?.claimedAt ?? Infinity;
    const explained = warned.some((t) => t >= execution.claimedAt && t <= next);
    return explained ? [] : [execution.attempt];
  });
}

/** The sample value of one series of a worker's GET /metrics (0 when absent). */
async function metric(worker: WorkerProcess, series: RegExp): Promise<number> {
  const port = Number(worker.withEvent('service_started')[0]?.['port']);
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => series.test(l));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('backtest worker replicas (two processes on the emulators)', () => {
  let h: E2eStack;
  const workers: WorkerProcess[] = [];

  const startWorker = async (): Promise<WorkerProcess> => {
    const emulators = emulatorEndpoints();
    const worker = await WorkerProcess.start({
      root: REPO,
      main: MAIN,
      env: {
        HOME: processEnv()['HOME'] ?? '/tmp',
        TDA_BACKEND: 'emulators',
        FIRESTORE_EMULATOR_HOST: emulators.firestoreHost,
        PUBSUB_EMULATOR_HOST: emulators.pubsubHost,
        GOOGLE_CLOUD_PROJECT: h.projectId,
        TDA_PUBSUB_PREFIX: h.prefix,
        TDA_DATA_DIR: h.stack.dataDir,
        PORT: '0',
        TDA_LOG_LEVEL: 'info',
        // A short lease so that a killed worker's step is reclaimable within the test — but not
        // so short that a live replica starved of CPU by the rest of `npm test` loses it (3 s
        // did once: the step ended at attempt 3).
        TDA_STEP_LEASE_SECONDS: '6',
        TDA_STEP_HEARTBEAT_SECONDS: '0.5',
        TDA_BACKTEST_BATCH_SIZE: '500',
        TDA_BACKTEST_SNAPSHOT_SECONDS: '0',
        TDA_BACKTEST_SNAPSHOT_VARIANTS_STEP: '2000',
      },
    });
    workers.push(worker);
    return worker;
  };

  /** The worker process running the job's step, once it is in stage B. */
  const runningOn = (runId: string): Promise<WorkerProcess> =>
    expectEventually(
      async () => {
        const run = await h.api.getRun(runId);
        expect(run.steps[STEP]?.progress?.stage).toBe('stage_b');
        const [holder] = executionsOf(workers, runId);
        const worker = workers.find((w) => w.pid === holder?.pid);
        expect(worker).toBeDefined();
        return worker as WorkerProcess;
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );

  beforeAll(async () => {
    h = await startE2eStack({
      name: 'btreplicas',
      // The reconciler reclaims the dead worker's step (the stack's own project: only these runs).
      env: { TDA_RECONCILE_INTERVAL_MS: '500', TDA_READY_REPUBLISH_AFTER_MS: '1500' },
      hooks: { omitWorkers: ['BACKTEST'] },
    });
    await Promise.all([startWorker(), startWorker()]);
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) worker.resume();
    for (const worker of workers) await worker.kill();
    await h?.stack.close();
  });

  it('two jobs run at the same time, one on each replica, each executed once', async () => {
    const jobs = await Promise.all(
      [0, 1].map(
        async () =>
          (await h.api.createBacktestJob(grid(5) as unknown as BacktestJobRequest)).job.job_id,
      ),
    );
    const runs = await Promise.all(
      jobs.map((id) => waitForRunStatus(h.api, id, 'SUCCEEDED', 120_000)),
    );
    const [a, b] = jobs.map((id) => executionsOf(workers, id));
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(new Set([a?.[0]?.pid, b?.[0]?.pid]).size).toBe(2);
    expect(runs.map((run: FlowRun) => run.steps[STEP]?.attempt)).toEqual([1, 1]);
    // Overlapping: each started before the other finished.
    const [x, y] = [a?.[0], b?.[0]];
    expect(x?.claimedAt).toBeLessThan(y?.finishedAt ?? 0);
    expect(y?.claimedAt).toBeLessThan(x?.finishedAt ?? 0);
    for (const worker of workers) {
      expect(
        await metric(
          worker,
          /^tda_step_claims_total\{[^}]*step_type="BACKTEST"[^}]*result="claimed"/,
        ),
      ).toBe(1);
      expect(
        await metric(
          worker,
          /^tda_step_outcomes_total\{[^}]*step_type="BACKTEST"[^}]*status="SUCCEEDED"/,
        ),
      ).toBe(1);
      expect(
        await metric(worker, /^tda_step_duration_seconds_count\{[^}]*step_type="BACKTEST"/),
      ).toBe(1);
    }
  }, 180_000);

  it('a worker SIGKILLed mid stage B: the other replica reclaims the step and the job succeeds', async () => {
    const { job } = await h.api.createBacktestJob(grid(10) as unknown as BacktestJobRequest);
    const victim = await runningOn(job.job_id);
    await victim.kill();
    const survivor = workers.find((w) => w !== victim && w.alive);
    if (survivor === undefined) throw new Error('no live replica left');
    const run = await waitForRunStatus(h.api, job.job_id, 'SUCCEEDED', 120_000);
    const executions = executionsOf(workers, job.job_id).sort((p, q) => p.attempt - q.attempt);
    const [first, ...later] = executions;
    expect([first?.pid, first?.attempt]).toEqual([victim.pid, 1]);
    // The survivor reclaimed it as attempt 2. Under the full suite's load an attempt may end
    // without a result (a retryable failure: nack, then the survivor takes its own step over);
    // that is at-least-once, but only with a logged reason (twice a run here ended at attempt 3,
    // without logs to tell why).
    expect(later.map((e) => [e.pid, e.attempt])).toEqual(
      later.map((_, i) => [survivor.pid, i + 2]),
    );
    expect(later.length).toBeGreaterThanOrEqual(1);
    const survivorLines = survivor.logs
      .filter((r) => r['runId'] === job.job_id)
      .map((r) => [
        r['time'],
        r['severity'],
        r['event'],
        r['attempt'],
        r['reason'],
        r['errorCode'],
      ]);
    expect(unexplainedRetries(survivor, job.job_id, later), JSON.stringify(survivorLines)).toEqual(
      [],
    );
    const last = later.at(-1)?.attempt;
    expect(run.steps[STEP]?.attempt).toBe(last);
    // The reclaim restarted the attempt: the best-so-far belongs to the last attempt, complete.
    expect(await h.stack.backends.checkpoints.readCheckpoint(job.job_id, STEP)).toMatchObject({
      attempt: last,
      stage: 'stage_b',
      processedUnits: 100_000,
    });
    const job2 = await h.api.getBacktestJob(job.job_id);
    expect(job2).toMatchObject({ state: 'succeeded' });
    expect((await h.api.backtestTop(job.job_id)).items).toHaveLength(5);
  }, 180_000);
  it('a worker frozen mid stage B loses the step to a new replica and, woken, writes nothing more (fenced)', async () => {
    await startWorker(); // a new instance beside the survivor of the previous test
    const { job } = await h.api.createBacktestJob(grid(10) as unknown as BacktestJobRequest);
    const mine = (r: LogRecord) => r['runId'] === job.job_id;
    const frozen = await runningOn(job.job_id);
    frozen.pause();
    const other = workers.find((w) => w !== frozen && w.alive);
    // The lease expires; the reconciler hands the step to the other replica (attempt 2).
    await expectEventually(
      async () => expect(other?.withEvent('step_claimed').filter(mine)).toHaveLength(1),
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    frozen.resume();
    const run = await waitForRunStatus(h.api, job.job_id, 'SUCCEEDED', 120_000);
    expect(run.steps[STEP]?.attempt).toBe(2);
    // Woken, the first worker finds its lease gone: it stops without a result of its own.
    await expectEventually(async () =>
      expect(frozen.withEvent('lease_lost').filter(mine)).toHaveLength(1),
    );
    expect(frozen.withEvent('step_succeeded').filter(mine)).toEqual([]);
    expect(await metric(frozen, /^tda_lease_lost_total\{[^}]*step_type="BACKTEST"/)).toBe(1);
    expect(await h.stack.backends.checkpoints.readCheckpoint(job.job_id, STEP)).toMatchObject({
      attempt: 2,
      processedUnits: 100_000,
    });
  }, 240_000);
});
