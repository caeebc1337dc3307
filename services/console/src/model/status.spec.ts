import { describe, expect, it } from 'vitest';
import type { StepStatus } from '../api/api-types';
import {
  isTerminalRun,
  isTerminalStep,
  RUN_STATUS_OPTIONS,
  runStatusLabel,
  runTone,
  stepStatusLabel,
  stepTone,
} from './status';

const STEP_STATUSES: StepStatus[] = [
  'PENDING',
  'READY',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'SKIPPED',
];

describe('status colours', () => {
  it('give a run and a step in the same state the same tone', () => {
    for (const status of RUN_STATUS_OPTIONS) expect(runTone(status)).toBe(stepTone(status));
  });

  it('tell every step status apart, and success from failure from cancellation', () => {
    const tones = STEP_STATUSES.map(stepTone);
    expect(new Set(tones).size).toBe(STEP_STATUSES.length);
    expect(stepTone('SUCCEEDED')).toBe('success');
    expect(stepTone('FAILED')).toBe('danger');
    expect(stepTone('RUNNING')).toBe('active');
  });

  it('always come with words; a PENDING run reads as queued', () => {
    expect(runStatusLabel('PENDING')).toBe('Queued');
    for (const status of STEP_STATUSES) expect(stepStatusLabel(status)).toMatch(/^[A-Z][a-z]+$/);
  });

  it('know which states are final', () => {
    expect(RUN_STATUS_OPTIONS.filter(isTerminalRun)).toEqual(['SUCCEEDED', 'FAILED', 'CANCELLED']);
    expect(STEP_STATUSES.filter((s) => !isTerminalStep(s))).toEqual([
      'PENDING',
      'READY',
      'RUNNING',
    ]);
  });
});
