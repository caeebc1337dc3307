import { validate, type FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { decideClaim } from './claim';
import { InvalidRequestError } from './errors';
import { decideFinalize } from './finalize';
import { applyPatch, FIELD_DELETE } from './patch';
import { at, makeRun } from './testing/run-fixtures';

const STEP = 'llm_report:1M:prompt_month_v1:model_x';

function claimedRun(): FlowRun {
  const run = makeRun(
    { [STEP]: { status: 'READY', timeframe: '1M', stepType: 'LLM_REPORT' } },
    { status: 'RUNNING' },
  );
  const claim = decideClaim(run, STEP, { now: at(0), owner: 'w1', leaseMs: 60_000 });
  if (claim.kind !== 'claim') throw new Error('claim expected');
  return applyPatch(run, claim.patch);
}

describe('decideFinalize', () => {
  it('finalizes SUCCEEDED: gcs_uri, merged execution with timing, lease removed', () => {
    const run = claimedRun();
    const decision = decideFinalize(run, STEP, {
      now: at(12),
      owner: 'w1',
      outcome: {
        status: 'SUCCEEDED',
        gcsUri: 'gs://tda-artifacts/runs/r/1M/x.json',
        outputs: { outputsManifestGcsUri: 'gs://tda-artifacts/runs/r/1M/m.json' },
        execution: { llm: { finishReason: 'STOP' }, worker: 'llm-report' },
      },
    });
    expect(decision).toMatchObject({ kind: 'finalize', status: 'SUCCEEDED' });
    if (decision.kind !== 'finalize') return;
    expect(decision.patch).toEqual({
      [`steps.${STEP}.status`]: 'SUCCEEDED',
      [`steps.${STEP}.finishedAt`]: at(12).toISOString(),
      [`steps.${STEP}.lease`]: FIELD_DELETE,
      [`steps.${STEP}.outputs.gcs_uri`]: 'gs://tda-artifacts/runs/r/1M/x.json',
      [`steps.${STEP}.outputs.outputsManifestGcsUri`]: 'gs://tda-artifacts/runs/r/1M/m.json',
      [`steps.${STEP}.outputs.execution.llm`]: { finishReason: 'STOP' },
      [`steps.${STEP}.outputs.execution.worker`]: 'llm-report',
      [`steps.${STEP}.outputs.execution.timing.finishedAt`]: at(12).toISOString(),
      [`steps.${STEP}.outputs.execution.timing.durationMs`]: 12_000,
    });
    const done = applyPatch(run, decision.patch);
    expect(done.steps[STEP]?.outputs.execution?.timing).toEqual({
      startedAt: at(0).toISOString(),
      finishedAt: at(12).toISOString(),
      durationMs: 12_000,
    });
    expect(done.steps[STEP]?.lease).toBeUndefined();
    expect(validate.flowRun(done).ok).toBe(true);
    // a duplicate finalize is a benign race: STEP_FINALIZE_CONFLICT semantics, nothing written
    expect(
      decideFinalize(done, STEP, { now: at(13), owner: 'w1', outcome: { status: 'SUCCEEDED' } }),
    ).toEqual({
      kind: 'noop',
      stepId: STEP,
      reason: { kind: 'already_final', status: 'SUCCEEDED' },
    });
  });

  it('finalizes FAILED with the error', () => {
    const error = { code: 'LLM_SAFETY_BLOCK' as const, message: 'blocked', retryable: false };
    const decision = decideFinalize(claimedRun(), STEP, {
      now: at(5),
      owner: 'w1',
      outcome: { status: 'FAILED', error },
    });
    expect(decision).toMatchObject({
      kind: 'finalize',
      patch: { [`steps.${STEP}.status`]: 'FAILED', [`steps.${STEP}.error`]: error },
    });
  });

  it('keeps diagnostic outputs of a FAILED step (seed 000: manifest of a partial failure)', () => {
    const run = claimedRun();
    const decision = decideFinalize(run, STEP, {
      now: at(5),
      owner: 'w1',
      outcome: {
        status: 'FAILED',
        error: { code: 'INTERNAL_ERROR', message: 'only 0 of 1 charts rendered', retryable: false },
        outputs: { outputsManifestGcsUri: 'gs://tda-artifacts/runs/r/1M/m.json' },
      },
    });
    if (decision.kind !== 'finalize') throw new Error('finalize expected');
    const after = applyPatch(run, decision.patch);
    expect(after.steps[STEP]?.status).toBe('FAILED');
    expect(after.steps[STEP]?.outputs.outputsManifestGcsUri).toBe(
      'gs://tda-artifacts/runs/r/1M/m.json',
    );
    expect(after.steps[STEP]?.outputs.gcs_uri).toBeUndefined();
  });

  it('finalizes CANCELLED with a default error', () => {
    const decision = decideFinalize(claimedRun(), STEP, {
      now: at(5),
      owner: 'w1',
      outcome: { status: 'CANCELLED' },
    });
    expect(decision).toMatchObject({
      kind: 'finalize',
      patch: {
        [`steps.${STEP}.status`]: 'CANCELLED',
        [`steps.${STEP}.error`]: { code: 'CANCELLED', retryable: false },
      },
    });
  });

  it('refuses a worker that does not hold the lease', () => {
    expect(
      decideFinalize(claimedRun(), STEP, {
        now: at(5),
        owner: 'w2',
        outcome: { status: 'SUCCEEDED' },
      }),
    ).toEqual({
      kind: 'noop',
      stepId: STEP,
      reason: { kind: 'lease_lost', leaseOwner: 'w1' },
    });
  });

  it('accepts the owner after its lease expired when nobody reclaimed the step', () => {
    expect(
      decideFinalize(claimedRun(), STEP, {
        now: at(3600),
        owner: 'w1',
        outcome: { status: 'SUCCEEDED' },
      }).kind,
    ).toBe('finalize');
  });

  it('is a no-op for steps that are not RUNNING or unknown, invalid for unsafe ids', () => {
    const run = makeRun(
      { a: { status: 'READY' }, b: { status: 'CANCELLED' } },
      { status: 'RUNNING' },
    );
    const opts = { now: at(1), owner: 'w1', outcome: { status: 'SUCCEEDED' as const } };
    expect(decideFinalize(run, 'a', opts)).toMatchObject({
      kind: 'noop',
      reason: { kind: 'not_running', status: 'READY' },
    });
    expect(decideFinalize(run, 'b', opts)).toMatchObject({
      kind: 'noop',
      reason: { kind: 'already_final', status: 'CANCELLED' },
    });
    expect(decideFinalize(run, 'zz', opts)).toMatchObject({
      kind: 'noop',
      reason: { kind: 'unknown_step' },
    });
    expect(decideFinalize(run, 'a/b', opts)).toMatchObject({
      kind: 'invalid',
      error: { code: 'FLOW_RUN_INVALID' },
    });
  });

  it('rejects execution keys that would split the field path', () => {
    expect(() =>
      decideFinalize(claimedRun(), STEP, {
        now: at(1),
        owner: 'w1',
        outcome: { status: 'SUCCEEDED', execution: { 'a.b': 1 } },
      }),
    ).toThrow(InvalidRequestError);
  });
});
