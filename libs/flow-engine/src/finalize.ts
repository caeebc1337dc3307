import type { ErrorInfo, FlowRun, StepExecution, StepOutputs, StepStatus } from '@tda/contracts';
import { errorInfo, InvalidRequestError } from './errors';
import { isStorageSafeStepId } from './ids';
import { FIELD_DELETE, stepPath, type RunPatch } from './patch';
import { isTerminalStepStatus } from './run-status';
import { stepOf } from './step-lookup';
import { timestampMs, toTimestamp } from './time';

export type FinalizeOutcome =
  | {
      status: 'SUCCEEDED';
      gcsUri?: string;
      /** Further output fields, e.g. outputsManifestGcsUri (merged key by key). */
      outputs?: Omit<StepOutputs, 'execution' | 'gcs_uri'>;
      execution?: StepExecution;
    }
  | {
      status: 'FAILED';
      error: ErrorInfo;
      /**
       * Diagnostic outputs a failed step still produced, e.g. the charts manifest of a partial
       * failure (seed 000: outputsManifestGcsUri is set even when the step fails).
       */
      outputs?: Omit<StepOutputs, 'execution' | 'gcs_uri'>;
      execution?: StepExecution;
    }
  | { status: 'CANCELLED'; error?: ErrorInfo; execution?: StepExecution };

export interface FinalizeOptions {
  now: Date;
  /** Must equal the lease owner written by the claim. */
  owner: string;
  outcome: FinalizeOutcome;
}

export type FinalizeNoopReason =
  | { kind: 'unknown_step' }
  /** A normal race (STEP_FINALIZE_CONFLICT semantics): do not overwrite a final step. */
  | { kind: 'already_final'; status: StepStatus }
  | { kind: 'not_running'; status: StepStatus }
  /** Someone else holds the step now (reclaimed after this worker's lease expired). */
  | { kind: 'lease_lost'; leaseOwner?: string };

export type FinalizeDecision =
  | { kind: 'finalize'; stepId: string; status: FinalizeOutcome['status']; patch: RunPatch }
  | { kind: 'noop'; stepId: string; reason: FinalizeNoopReason }
  | { kind: 'invalid'; stepId: string; error: ErrorInfo };

/** Field names written as dotted path segments must not themselves contain a path separator. */
const FIELD_NAME = /^[A-Za-z0-9_-]+$/;

function assertFieldNames(where: string, value: Readonly<Record<string, unknown>>): void {
  for (const key of Object.keys(value)) {
    if (!FIELD_NAME.test(key)) {
      throw new InvalidRequestError(`invalid field name '${key}' in ${where}`, { where, key });
    }
  }
}

/**
 * RUNNING -> SUCCEEDED | FAILED | CANCELLED, only for the worker that holds the lease (DESIGN §3).
 * Patch: status, finishedAt, the lease removed; outputs.gcs_uri and further outputs on success;
 * `error` on failure/cancel (removed on success); `outputs.execution` merged key by key so the
 * claim's timing.startedAt survives, with timing.finishedAt and durationMs filled in. An
 * expired lease that nobody took over is still ours: expiry only allows a reclaim.
 */
/** Output fields merged key by key; gcs_uri and execution have their own rules. */
function addOutputs(
  patch: Record<string, unknown>,
  at: (field: string) => string,
  outputs: Record<string, unknown> | undefined,
): void {
  if (outputs === undefined) return;
  assertFieldNames('outputs', outputs);
  for (const [key, value] of Object.entries(outputs)) {
    if (key === 'execution' || key === 'gcs_uri' || value === undefined) continue;
    patch[at(`outputs.${key}`)] = value;
  }
}

export function decideFinalize(
  run: FlowRun,
  stepId: string,
  options: FinalizeOptions,
): FinalizeDecision {
  const ts = toTimestamp(options.now);
  if (!isStorageSafeStepId(stepId)) {
    return {
      kind: 'invalid',
      stepId,
      error: errorInfo('FLOW_RUN_INVALID', `stepId '${stepId}' is not storage-safe`, { stepId }),
    };
  }
  const step = stepOf(run, stepId);
  if (step === undefined) return { kind: 'noop', stepId, reason: { kind: 'unknown_step' } };
  if (isTerminalStepStatus(step.status)) {
    return { kind: 'noop', stepId, reason: { kind: 'already_final', status: step.status } };
  }
  if (step.status !== 'RUNNING') {
    return { kind: 'noop', stepId, reason: { kind: 'not_running', status: step.status } };
  }
  if (step.lease?.owner !== options.owner) {
    const reason: FinalizeNoopReason = { kind: 'lease_lost' };
    if (step.lease !== undefined) reason.leaseOwner = step.lease.owner;
    return { kind: 'noop', stepId, reason };
  }

  const { outcome } = options;
  const at = (field: string): string => stepPath(stepId, field);
  const patch: Record<string, unknown> = {
    [at('status')]: outcome.status,
    [at('finishedAt')]: ts,
    [at('lease')]: FIELD_DELETE,
  };
  switch (outcome.status) {
    case 'SUCCEEDED':
      if (outcome.gcsUri !== undefined) patch[at('outputs.gcs_uri')] = outcome.gcsUri;
      addOutputs(patch, at, outcome.outputs);
      if (step.error !== undefined) patch[at('error')] = FIELD_DELETE;
      break;
    case 'FAILED':
      addOutputs(patch, at, outcome.outputs);
      patch[at('error')] = outcome.error;
      break;
    case 'CANCELLED':
      patch[at('error')] =
        outcome.error ?? errorInfo('CANCELLED', 'step cancelled by its worker', { stepId });
      break;
  }

  const execution = outcome.execution ?? {};
  assertFieldNames('outputs.execution', execution);
  const { timing = {}, ...rest } = execution;
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined) patch[at(`outputs.execution.${key}`)] = value;
  }
  assertFieldNames('outputs.execution.timing', timing);
  const finalTiming: Record<string, unknown> = { ...timing };
  finalTiming['finishedAt'] ??= ts;
  const startedMs = timestampMs(timing.startedAt ?? step.outputs.execution?.timing?.startedAt);
  if (finalTiming['durationMs'] === undefined && startedMs !== undefined) {
    finalTiming['durationMs'] = Math.max(0, options.now.getTime() - startedMs);
  }
  for (const [key, value] of Object.entries(finalTiming)) {
    if (value !== undefined) patch[at(`outputs.execution.timing.${key}`)] = value;
  }
  return { kind: 'finalize', stepId, status: outcome.status, patch };
}
