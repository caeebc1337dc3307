import { validate, type FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { advance } from './advance';
import { applyPatch } from './patch';
import { downstreamOf } from './dag';
import { buildRerun, producingRunId, reusedFromOf } from './rerun';
import { at, iso, makeRun, statusesOf } from './testing/run-fixtures';

const SOURCE_ID = '20250115-100000_BTC-USDT_abcde';
const NEW_ID = '20250116-090000_BTC-USDT_zzzzz';

function uri(stepId: string, runId = SOURCE_ID): string {
  return `gs://tda-artifacts/runs/${runId}/${stepId}.json`;
}

/** A finished flow-1 shaped run. */
function finishedRun(): FlowRun {
  const done = (stepId: string, dependsOn: string[] = []) => ({
    status: 'SUCCEEDED' as const,
    attempt: 1,
    dependsOn,
    inputs: { note: stepId },
    readyAt: iso(1),
    finishedAt: iso(2),
    outputs: {
      gcs_uri: uri(stepId),
      execution: { timing: { startedAt: iso(1), finishedAt: iso(2) }, worker: 'w1' },
    },
  });
  return makeRun(
    {
      o1: done('o1'),
      o2: done('o2'),
      c1: done('c1', ['o1']),
      c2: done('c2', ['o2']),
      r1: done('r1', ['o1', 'c1']),
      r2: done('r2', ['o2', 'c2', 'r1']),
    },
    {
      runId: SOURCE_ID,
      status: 'SUCCEEDED',
      flowKey: 'scheduled_month_week_report_v1',
      idempotencyKey: 'k1',
      deadlineAt: iso(3600),
    },
  );
}

describe('buildRerun', () => {
  it('reruns the step and its downstream; every other step is reused SUCCEEDED with the source outputs', () => {
    const source = finishedRun();
    const decision = buildRerun(source, {
      fromStepId: 'c2',
      runId: NEW_ID,
      now: at(86_400),
      deadlineMs: 600_000,
    });
    expect(decision.kind).toBe('rerun');
    if (decision.kind !== 'rerun') return;
    expect(decision.reused).toEqual(['c1', 'o1', 'o2', 'r1']);
    expect(decision.rerun).toEqual(['c2', 'r2']);
    const { run } = decision;
    expect(validate.flowRun(run).ok).toBe(true);
    expect(run).toMatchObject({
      runId: NEW_ID,
      flowKey: source.flowKey,
      status: 'PENDING',
      scope: source.scope,
      ownerId: source.ownerId,
      createdAt: iso(86_400),
      deadlineAt: iso(87_000),
      trigger: {
        type: 'SYSTEM',
        source: 'orchestrator-rerun',
        rerunOf: { runId: SOURCE_ID, fromStepId: 'c2' },
      },
    });
    expect(run).not.toHaveProperty('idempotencyKey');
    expect(statusesOf(run)).toEqual({
      o1: 'SUCCEEDED',
      o2: 'SUCCEEDED',
      c1: 'SUCCEEDED',
      c2: 'PENDING',
      r1: 'SUCCEEDED',
      r2: 'PENDING',
    });
    const o2 = run.steps['o2'];
    expect(o2?.outputs.gcs_uri).toBe(uri('o2'));
    expect(o2?.outputs.execution).toMatchObject({
      worker: 'w1',
      reusedFrom: { runId: SOURCE_ID, stepId: 'o2', sourceRunId: SOURCE_ID },
    });
    expect(o2).toMatchObject({ attempt: 0, inputs: { note: 'o2' }, dependsOn: [] });
    expect(o2).not.toHaveProperty('readyAt');
    expect(run.steps['r2']).toMatchObject({
      status: 'PENDING',
      attempt: 0,
      outputs: {},
      dependsOn: ['o2', 'c2', 'r1'],
    });
    expect(run.progress).toMatchObject({ total: 6, succeeded: 4, pending: 2 });
    // The source is untouched.
    expect(source.steps['c2']?.outputs.execution).not.toHaveProperty('reusedFrom');

    // The first advance readies only the rerun step whose dependencies are all (reused) SUCCEEDED.
    expect(advance(run, at(86_401)).newlyReady).toEqual(['c2']);
  });

  it('reruns a leaf alone (the week report): everything upstream is reused', () => {
    const decision = buildRerun(finishedRun(), { fromStepId: 'r2', runId: NEW_ID, now: at(9) });
    expect(decision).toMatchObject({ kind: 'rerun', rerun: ['r2'] });
    if (decision.kind !== 'rerun') return;
    expect(decision.reused).toHaveLength(5);
    expect(decision.run).not.toHaveProperty('deadlineAt');
    expect(advance(decision.run, at(10)).newlyReady).toEqual(['r2']);
  });

  it('points a rerun of a rerun at the run that produced each artifact', () => {
    const first = buildRerun(finishedRun(), { fromStepId: 'r2', runId: NEW_ID, now: at(9) });
    if (first.kind !== 'rerun') throw new Error('expected a rerun');
    // the first rerun finishes: r2 executed in NEW_ID
    const finished = applyPatch(first.run, {
      status: 'SUCCEEDED',
      'steps.r2.status': 'SUCCEEDED',
      'steps.r2.attempt': 1,
      'steps.r2.outputs': { gcs_uri: uri('r2', NEW_ID) },
    });
    const thirdId = '20250117-090000_BTC-USDT_yyyyy';
    const second = buildRerun(finished, { fromStepId: 'r1', runId: thirdId, now: at(20) });
    if (second.kind !== 'rerun') throw new Error('expected a rerun');
    expect(second.rerun).toEqual(['r1', 'r2']);
    expect(reusedFromOf(second.run.steps['o1'])).toEqual({
      runId: SOURCE_ID,
      stepId: 'o1',
      sourceRunId: NEW_ID,
    });
    expect(producingRunId(second.run, 'o1')).toBe(SOURCE_ID);
    expect(producingRunId(finished, 'r2')).toBe(NEW_ID);
    expect(producingRunId(second.run, 'r2')).toBe(thirdId);
  });

  it('refuses when a step outside the rerun did not succeed, naming it', () => {
    const source = applyPatch(finishedRun(), {
      status: 'FAILED',
      'steps.c1.status': 'FAILED',
      'steps.r1.status': 'CANCELLED',
    });
    const decision = buildRerun(source, { fromStepId: 'r2', runId: NEW_ID, now: at(9) });
    expect(decision).toMatchObject({
      kind: 'conflict',
      steps: [
        { stepId: 'c1', status: 'FAILED' },
        { stepId: 'r1', status: 'CANCELLED' },
      ],
    });
    // ...but a failed run reruns from its failed step when all before it succeeded
    expect(buildRerun(source, { fromStepId: 'c1', runId: NEW_ID, now: at(9) })).toMatchObject({
      kind: 'rerun',
      rerun: ['c1', 'r1', 'r2'],
    });
  });

  it('carries SKIPPED steps over as SKIPPED', () => {
    const source = applyPatch(finishedRun(), { 'steps.c1.status': 'SKIPPED' });
    const decision = buildRerun(source, { fromStepId: 'r2', runId: NEW_ID, now: at(9) });
    expect(decision).toMatchObject({ kind: 'rerun', skipped: ['c1'] });
  });

  it('answers step_not_found for an unknown or unsafe fromStepId', () => {
    expect(buildRerun(finishedRun(), { fromStepId: 'x', runId: NEW_ID, now: at(1) })).toEqual({
      kind: 'step_not_found',
      stepId: 'x',
    });
    expect(buildRerun(finishedRun(), { fromStepId: 'a/b', runId: NEW_ID, now: at(1) }).kind).toBe(
      'step_not_found',
    );
  });
});

describe('downstreamOf', () => {
  it('is the step and its transitive dependents', () => {
    expect([...downstreamOf(finishedRun().steps, 'o1')].sort()).toEqual(['c1', 'o1', 'r1', 'r2']);
    expect([...downstreamOf(finishedRun().steps, 'r2')]).toEqual(['r2']);
  });
});
