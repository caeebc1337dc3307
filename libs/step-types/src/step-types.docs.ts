import type { StepPolicy } from '@tda/flow-engine';
import type { AnyStepTypeDescriptor } from './step-type.descriptor';
import { STEP_TYPE_DESCRIPTORS } from './step-types.registry';

/**
 * The README's tables about step types, rendered from the descriptors (tools/docs/readme.spec.ts
 * fails when the README's copy differs, and rewrites it with TDA_WRITE_DOCS=1).
 */

const seconds = (ms: number): string => `${ms / 1000} s`;

function retries(policy: StepPolicy): string {
  const { tries, baseDelayMs, maxDelayMs } = policy.retry;
  if (tries <= 1) return 'none';
  const waits = Array.from({ length: tries - 1 }, (_, i) =>
    Math.min(baseDelayMs * 2 ** i, maxDelayMs),
  );
  return `${tries} tries, ${waits.map(seconds).join(' / ')} (cap ${seconds(maxDelayMs)})`;
}

function policyRow(d: AnyStepTypeDescriptor): string[] {
  const p = d.policy;
  return [
    `\`${d.stepType}\``,
    `\`${d.service}\``,
    seconds(p.timeoutMs),
    String(p.maxAttempts),
    `${seconds(p.leaseMs)} / ${seconds(p.heartbeatMs)}`,
    retries(p),
  ];
}

/** A README table as data (tools/docs renders it as Markdown). */
export interface DocTable {
  head: readonly string[];
  rows: readonly (readonly string[])[];
}

/** One row per described step type: its worker and the policy its claims record. */
export function stepPolicyTable(
  descriptors: readonly AnyStepTypeDescriptor[] = STEP_TYPE_DESCRIPTORS,
): DocTable {
  return {
    head: [
      'step type',
      'worker',
      'step timeout',
      'max attempts',
      'lease / heartbeat',
      'in-process retries',
    ],
    rows: descriptors.map(policyRow),
  };
}
