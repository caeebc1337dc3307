import { describe, expect, it } from 'vitest';
import { describeNotExecutable, isExecutable, selectExecutableStep } from './executable';
import { iso, makeRun } from './testing/run-fixtures';

const report = (overrides = {}) => ({
  stepType: 'LLM_REPORT' as const,
  status: 'READY' as const,
  dependsOn: ['ohlcv', 'charts'],
  ...overrides,
});

describe('isExecutable (seed 002 scenario A/B)', () => {
  const base = () =>
    makeRun(
      {
        ohlcv: { status: 'SUCCEEDED' },
        charts: { status: 'SUCCEEDED', stepType: 'CHART_EXPORT' },
        'llm_report:1M:p:m': report({ timeframe: '1M' }),
      },
      { status: 'RUNNING' },
    );

  it('is executable when READY, deps SUCCEEDED, run RUNNING and the type matches', () => {
    const verdict = isExecutable(base(), 'llm_report:1M:p:m', 'LLM_REPORT');
    expect(verdict.executable).toBe(true);
  });

  it.each([
    [
      'unsafe stepId',
      (r: ReturnType<typeof base>) => r,
      'a.b',
      'LLM_REPORT',
      { kind: 'unsafe_step_id' },
    ],
    [
      'unknown step',
      (r: ReturnType<typeof base>) => r,
      'nope',
      'LLM_REPORT',
      { kind: 'unknown_step' },
    ],
    [
      'step type mismatch',
      (r: ReturnType<typeof base>) => r,
      'llm_report:1M:p:m',
      'CHART_EXPORT',
      { kind: 'step_type_mismatch', expected: 'CHART_EXPORT', actual: 'LLM_REPORT' },
    ],
    [
      'run not running',
      (r: ReturnType<typeof base>) => ({ ...r, status: 'PENDING' as const }),
      'llm_report:1M:p:m',
      'LLM_REPORT',
      { kind: 'run_not_running', runStatus: 'PENDING' },
    ],
    [
      'cancel requested',
      (r: ReturnType<typeof base>) => ({ ...r, cancelRequestedAt: iso(1) }),
      'llm_report:1M:p:m',
      'LLM_REPORT',
      { kind: 'cancel_requested', cancelRequestedAt: iso(1) },
    ],
    [
      'not ready',
      (r: ReturnType<typeof base>) =>
        makeRun(
          { ...r.steps, x: { status: 'RUNNING', stepType: 'LLM_REPORT' } },
          { status: 'RUNNING' },
        ),
      'x',
      'LLM_REPORT',
      { kind: 'not_ready', status: 'RUNNING' },
    ],
    [
      'unknown dependency',
      () => makeRun({ x: report({ dependsOn: ['ghost'] }) }, { status: 'RUNNING' }),
      'x',
      'LLM_REPORT',
      { kind: 'unknown_dependency', dependencies: ['ghost'] },
    ],
    [
      'unmet dependencies',
      () =>
        makeRun(
          { ohlcv: { status: 'SUCCEEDED' }, charts: { status: 'RUNNING' }, x: report() },
          { status: 'RUNNING' },
        ),
      'x',
      'LLM_REPORT',
      { kind: 'unmet_dependencies', dependencies: [{ stepId: 'charts', status: 'RUNNING' }] },
    ],
  ] as const)('not executable: %s', (_name, mutate, stepId, stepType, reason) => {
    const verdict = isExecutable(mutate(base()), stepId, stepType);
    expect(verdict).toMatchObject({ executable: false, stepId, reason });
    if (!verdict.executable) expect(describeNotExecutable(verdict.reason)).not.toBe('');
  });

  it('does not treat inherited object keys as steps', () => {
    expect(isExecutable(base(), 'constructor')).toMatchObject({ reason: { kind: 'unknown_step' } });
  });
});

describe('selectExecutableStep', () => {
  it('picks the lexicographically first executable step of the type', () => {
    const run = makeRun(
      {
        dep: { status: 'SUCCEEDED' },
        'r:c': report({ dependsOn: ['dep'] }),
        'r:a': report({ dependsOn: ['blocked'] }),
        'r:b': report({ dependsOn: ['dep'] }),
        blocked: { status: 'RUNNING' },
        'o:a': { status: 'READY' },
      },
      { status: 'RUNNING' },
    );
    expect(selectExecutableStep(run, 'LLM_REPORT')?.stepId).toBe('r:b');
    expect(selectExecutableStep(run, 'OHLCV_EXPORT')?.stepId).toBe('o:a');
    expect(selectExecutableStep(run, 'NEWS_EXPORT')).toBeUndefined();
    expect(selectExecutableStep({ ...run, status: 'FAILED' }, 'LLM_REPORT')).toBeUndefined();
  });
});
