import type { FlowRun, FlowStep, StepType } from '@tda/contracts';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { describe, expect, it } from 'vitest';
import { evaluateChaos, type ChaosObservations, type ReplayObservation } from './chaos-checks';
import type { InjectedFault } from './chaos-controller';
import type { ModelCall } from './chaos-model.server';
import {
  FLOW1_STEPS,
  FLOW1_STEP_IDS,
  planChaos,
  REPORT_STEP,
  type RunPlan,
  type Timeframe,
} from './chaos-plan';
import { renderChaosReport } from './chaos-report';
import type { ExecutionRecord } from './counting-handler';

const plan = planChaos({ seed: 3, runs: 16, kills: 2, finalizeFailures: 3, ownerPrefix: 't' });
const T0 = Date.parse('2026-03-01T12:00:00.000Z');

const STEP_TYPE: Record<string, StepType> = {
  [FLOW1_STEPS.ohlcv1M]: 'OHLCV_EXPORT',
  [FLOW1_STEPS.ohlcv1w]: 'OHLCV_EXPORT',
  [FLOW1_STEPS.charts1M]: 'CHART_EXPORT',
  [FLOW1_STEPS.charts1w]: 'CHART_EXPORT',
  [FLOW1_STEPS.report1M]: 'LLM_REPORT',
  [FLOW1_STEPS.report1w]: 'LLM_REPORT',
};

/** What a flawless suite run of `plan` would have observed. */
function flawless(): ChaosObservations {
  const obs: ChaosObservations = {
    plan,
    durationMs: 60_000,
    runs: [],
    executions: [],
    modelCalls: [],
    injected: [],
    conflicts: new Map(),
    rogueWrites: 0,
    dispatches: [],
    claims: [],
    artifacts: { checked: 60, problems: [] },
    replay: {
      runs: 14,
      dryRun: { noop: 160 },
      expected: 200,
      redelivered: 200,
      missing: {},
      runsChanged: [],
      artifactsAdded: [],
      artifactsChanged: [],
    },
  };
  for (const run of plan.runs) {
    const runId = `20260301-120000_BTC-USDT_r${run.index}`;
    const steps: Record<string, FlowStep> = {};
    const status = stepStatuses(run);
    for (const stepId of FLOW1_STEP_IDS) {
      const s = status[stepId] ?? 'SUCCEEDED';
      const killed = run.kill !== undefined && REPORT_STEP[run.kill.timeframe] === stepId;
      const attempt = s === 'CANCELLED' && !isHeld(run, stepId) ? 0 : killed ? 2 : 1;
      steps[stepId] = makeStep({
        stepType: STEP_TYPE[stepId] ?? 'OHLCV_EXPORT',
        status: s,
        attempt,
        ...(s === 'FAILED'
          ? { error: { code: 'LLM_TIMEOUT', message: 'hung', retryable: true } }
          : {}),
        outputs:
          run.finalizeFailure?.stepId === stepId ||
          (killed && run.kill?.moment === 'before_finalize')
            ? { gcs_uri: 'gs://b/x.json', execution: { recoveredFromArtifact: true } }
            : {},
      });
      const record = (phase: ExecutionRecord['phase'], at: number): void => {
        obs.executions.push({ pid: 1, service: 's', runId, stepId, attempt: at, phase, at: T0 });
      };
      const afterArtifact = killed && run.kill?.moment === 'before_finalize';
      if (killed) record('start', 1);
      if (afterArtifact) {
        record('completed', 1);
        record('recover', 2);
        obs.claims.push({ runId, stepId, attempt, pid: 2 });
      } else if (s === 'SUCCEEDED') {
        record('start', attempt);
        record('completed', attempt);
        obs.claims.push({ runId, stepId, attempt, pid: killed ? 2 : 1 });
      }
      if (s === 'FAILED') for (let i = 0; i < 3; i += 1) record('start', 1);
    }
    const final: FlowRun = makeFlowRun({ runId, status: run.expected, steps });
    obs.runs.push({ plan: run, runId, final, settled: true, durationMs: 5_000 });
    for (const timeframe of ['1M', '1w'] as const) {
      const stepId = REPORT_STEP[timeframe];
      const s = steps[stepId]?.status;
      const call = (c: Partial<ModelCall>): void => {
        obs.modelCalls.push({
          runId,
          timeframe,
          stepId,
          repair: false,
          behaviour: 'answer',
          answered: true,
          aborted: false,
          at: T0,
          ...c,
        });
      };
      if (isHeld(run, stepId)) call({ behaviour: 'hold', answered: false, aborted: true });
      if (run.hang?.timeframe === timeframe) {
        const hung = run.hang.mode === 'persistent' ? 3 : 1;
        for (let i = 0; i < hung; i += 1) {
          call({ behaviour: 'hang', answered: false, aborted: true });
          obs.injected.push(fault(run, 'model_hang', 'hang', runId, stepId));
        }
      }
      if (s !== 'SUCCEEDED') continue;
      if (run.badOutput?.timeframe === timeframe) {
        call({ behaviour: 'invalid' });
        call({ repair: true });
        obs.injected.push(fault(run, 'model_bad_output', 'invalid', runId, stepId));
      } else call({});
    }
    if (run.crash !== undefined) {
      obs.injected.push(fault(run, 'orchestrator_crash', 'publish_lost', runId, run.crash.stepId));
      obs.dispatches.push({ runId, stepId: run.crash.stepId, reason: 'reconcile', at: T0 + 1 });
    }
    if (run.finalizeFailure !== undefined) {
      for (let i = 1; i <= 3; i += 1) {
        obs.injected.push({
          ...fault(
            run,
            'finalize_write_failed',
            'finalize_failed',
            runId,
            run.finalizeFailure.stepId,
          ),
          detail: { failure: i, of: 3, artifactWritten: true },
        });
      }
    }
    if (run.kill !== undefined) {
      obs.injected.push({
        ...fault(run, 'worker_killed', 'killed', runId, REPORT_STEP[run.kill.timeframe]),
        detail: { pid: 1, moment: run.kill.moment },
      });
    }
    if (run.writer?.mode === 'cancel') {
      obs.injected.push(
        fault(run, 'conflicting_writer', 'cancelled', runId, REPORT_STEP[run.writer.timeframe]),
      );
    }
    if (run.writer?.mode === 'touch') {
      obs.rogueWrites += 5;
      obs.injected.push(fault(run, 'conflicting_writer', 'touch', runId));
    }
    if (run.duplicates !== undefined) {
      obs.injected.push(fault(run, 'duplicate_reorder', 'duplicate', runId, FLOW1_STEPS.ohlcv1M));
    }
  }
  return obs;
}

function fault(
  _run: RunPlan,
  kind: InjectedFault['kind'],
  action: string,
  runId: string,
  stepId?: string,
): InjectedFault {
  return { kind, action, runId, ...(stepId === undefined ? {} : { stepId }), at: T0 };
}

function isHeld(run: RunPlan, stepId: string): boolean {
  const held: Timeframe | undefined =
    run.kill?.moment === 'model_call'
      ? run.kill.timeframe
      : run.writer?.mode === 'cancel'
        ? run.writer.timeframe
        : undefined;

  return held !== undefined && REPORT_STEP[held] === stepId;
}

/** Step statuses of a run that ended as planned. */
function stepStatuses(run: RunPlan): Record<string, FlowStep['status']> {
  const out: Record<string, FlowStep['status']> = {};
  const stopAt =
    run.expected === 'FAILED'
      ? run.hang?.timeframe
      : run.writer?.mode === 'cancel'
        ? run.writer.timeframe
        : undefined;
  if (stopAt === undefined) return out;
  out[REPORT_STEP[stopAt]] = run.expected === 'FAILED' ? 'FAILED' : 'CANCELLED';
  if (stopAt === '1M') out[REPORT_STEP['1w']] = 'CANCELLED';
  return out;
}

function row(obs: ChaosObservations, check: string): { ok: boolean; observed: string } {
  const found = evaluateChaos(obs).checks.find((c) => c.check === check);
  if (found === undefined) throw new Error(`no check ${check}`);
  return { ok: found.ok, observed: found.observed };
}

function driven(obs: ChaosObservations, predicate: (run: RunPlan) => boolean) {
  const found = obs.runs.find((r) => predicate(r.plan));
  if (found?.final === undefined || found.runId === undefined) throw new Error('no such run');
  return { run: found, final: found.final, runId: found.runId };
}

describe('evaluateChaos', () => {
  it('passes a flawless run of the plan and reports every fault kind', () => {
    const report = evaluateChaos(flawless());
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.checks.map((c) => c.check)).toEqual([
      'runs driven',
      'runs terminal',
      'outcome as planned',
      'lost steps',
      'artifacts of SUCCEEDED steps',
      'executions per step attempt',
      'model calls per LLM step',
      'each fault injected and recovered as designed',
      'side effects caused by replay',
    ]);
    expect(report.faults.every((f) => f.runs > 0)).toBe(true);
    expect(report.runs).toHaveLength(16);
    const text = renderChaosReport(report);
    expect(text).toContain('| runs terminal | 100 % | 16/16 (100 %) | ok |');
    expect(text).toContain(
      '| side effects caused by replay | 0 | 0 (POST /admin/replay to before the first run: dry run 160 × noop; 200/200 messages of 14 runs redelivered) | ok |',
    );
  });

  it('fails on a second completed execution of a step attempt', () => {
    const obs = flawless();
    const first = obs.executions.find((e) => e.phase === 'completed');
    if (first === undefined) throw new Error('no execution');
    obs.executions.push({ ...first }, { ...first, phase: 'start' });
    const result = row(obs, 'executions per step attempt');
    expect(result.ok).toBe(false);
    expect(result.observed).toContain(
      `${first.runId}|${first.stepId}|${first.attempt} executed 2 times`,
    );
  });

  it('fails on a step left RUNNING in a terminal run (a lost step)', () => {
    const obs = flawless();
    const { final } = driven(obs, (p) => p.expected === 'SUCCEEDED');
    const step = final.steps[FLOW1_STEPS.charts1w];
    if (step === undefined) throw new Error('no step');
    step.status = 'RUNNING';
    step.lease = { owner: 'w', expiresAt: '2026-03-01T12:00:00.000Z' };
    expect(row(obs, 'lost steps')).toMatchObject({ ok: false });
    expect(row(obs, 'runs terminal').ok).toBe(true);
  });

  it('fails when an artifact is missing or differs from its recorded sha256', () => {
    const obs = flawless();
    obs.artifacts = {
      checked: 60,
      problems: ['run 3 charts:1M:ctpl_default_v1: gs://x is missing'],
    };
    expect(row(obs, 'artifacts of SUCCEEDED steps')).toEqual({
      ok: false,
      observed: '59/60; run 3 charts:1M:ctpl_default_v1: gs://x is missing',
    });
  });

  it('fails on a second answered model call or an unexplained unanswered one', () => {
    const obs = flawless();
    const { runId } = driven(
      obs,
      (p) =>
        p.expected === 'SUCCEEDED' &&
        p.hang === undefined &&
        p.badOutput === undefined &&
        p.kill === undefined,
    );
    const answered = obs.modelCalls.find((c) => c.runId === runId && c.timeframe === '1M');
    if (answered === undefined) throw new Error('no call');
    obs.modelCalls.push({ ...answered });
    expect(row(obs, 'model calls per LLM step').observed).toContain('2 answered + 0 repair calls');

    const again = flawless();
    again.modelCalls.push({ ...answered, answered: false, aborted: true, behaviour: 'answer' });
    expect(row(again, 'model calls per LLM step').observed).toContain(
      'unanswered calls without a planned hang/kill/cancel',
    );
  });

  it('fails when the worker killed after its artifact write was not finalized from that artifact', () => {
    const obs = flawless();
    const { final, run } = driven(obs, (p) => p.kill?.moment === 'before_finalize');
    const step = final.steps[REPORT_STEP[run.plan.kill?.timeframe ?? '1M']];
    if (step === undefined) throw new Error('no step');
    step.outputs = { gcs_uri: 'gs://b/x.json' };
    expect(row(obs, 'each fault injected and recovered as designed').observed).toContain(
      "was not finalized from the killed worker's artifact",
    );
  });

  it('fails when a lost publish was never republished or a finalize was not recovered from its artifact', () => {
    const obs = flawless();
    obs.dispatches = [];
    expect(row(obs, 'each fault injected and recovered as designed').observed).toContain(
      'was never republished',
    );
    const again = flawless();
    const { final, run } = driven(again, (p) => p.finalizeFailure !== undefined);
    const stepId = run.plan.finalizeFailure?.stepId ?? '';
    const step = final.steps[stepId];
    if (step === undefined) throw new Error('no step');
    step.outputs = { gcs_uri: 'gs://b/x.json' };
    expect(row(again, 'each fault injected and recovered as designed').observed).toContain(
      'not finalized from its artifact',
    );
  });

  it('fails when the planned outcome is missed or a planned fault never happened', () => {
    const obs = flawless();
    const { final } = driven(obs, (p) => p.expected === 'CANCELLED');
    final.status = 'SUCCEEDED';
    expect(row(obs, 'outcome as planned').ok).toBe(false);
    const again = flawless();
    again.injected = again.injected.filter((f) => f.kind !== 'orchestrator_crash');
    expect(row(again, 'each fault injected and recovered as designed').observed).toContain(
      'orchestrator_crash: planned but never injected',
    );
  });

  it('fails when the replay changed a run, added an artifact or was not fully redelivered', () => {
    const changes: Partial<ReplayObservation>[] = [
      { runsChanged: ['r1'] },
      { artifactsAdded: ['tda-artifacts/runs/r1/1M/x.json'] },
      { redelivered: 150, missing: { 'x-sub': 50 } },
      { dryRun: { noop: 150, execute: 1 } },
      { dryRun: {} },
    ];
    for (const change of changes) {
      const obs = flawless();
      if (obs.replay === undefined) throw new Error('no replay');
      obs.replay = { ...obs.replay, ...change };
      expect(row(obs, 'side effects caused by replay').ok).toBe(false);
    }
  });
});
