import type { RunDocument, RunStep, StepStatus } from '../api/api-types';
import { topologicalOrder } from './dag';

/**
 * A step's life on the run's clock: queued (READY, waiting for a worker: readyAt → claimed) and
 * running (claimed → finished). "Claimed" is outputs.execution.timing.startedAt, which the claim
 * writes; "finished" is the step's finishedAt (or the worker's timing.finishedAt).
 */
export interface TimelineSegment {
  kind: 'queue' | 'run';
  startMs: number;
  endMs: number;
  /** Still growing (the step is READY or RUNNING now). */
  open: boolean;
}

export interface TimelineRow {
  stepId: string;
  status: StepStatus;
  attempt: number;
  maxAttempts: number | undefined;
  /** Earlier lives of the step (a retry keeps them in retryHistory). */
  retries: number;
  segments: TimelineSegment[];
  queueMs: number | undefined;
  runMs: number | undefined;
  /** Copied from another run by a rerun: its times belong to that run, so no bars. */
  reusedFrom: string | undefined;
}

export interface Timeline {
  startMs: number;
  endMs: number;
  rows: TimelineRow[];
}

function ms(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

function reusedFromRun(step: RunStep): string | undefined {
  const reused = step.outputs.execution?.['reusedFrom'];
  if (typeof reused !== 'object' || reused === null) return undefined;
  const runId = (reused as Record<string, unknown>)['runId'];
  return typeof runId === 'string' ? runId : 'another run';
}

function segmentsOf(step: RunStep, nowMs: number): TimelineSegment[] {
  const timing = step.outputs.execution?.timing;
  const readyAt = ms(step.readyAt);
  const claimedAt = ms(timing?.startedAt);
  const finishedAt = ms(step.finishedAt) ?? ms(timing?.finishedAt);
  const segments: TimelineSegment[] = [];
  if (readyAt !== undefined) {
    const waiting = step.status === 'READY';
    const end = claimedAt ?? (waiting ? nowMs : finishedAt);
    if (end !== undefined && end >= readyAt) {
      segments.push({ kind: 'queue', startMs: readyAt, endMs: end, open: waiting });
    }
  }
  if (claimedAt !== undefined) {
    const running = step.status === 'RUNNING';
    const end = running ? nowMs : finishedAt;
    if (end !== undefined && end >= claimedAt) {
      segments.push({ kind: 'run', startMs: claimedAt, endMs: end, open: running });
    }
  }
  return segments;
}

function lengthOf(segments: TimelineSegment[], kind: TimelineSegment['kind']): number | undefined {
  const segment = segments.find((s) => s.kind === kind);
  return segment === undefined ? undefined : segment.endMs - segment.startMs;
}

/** The timeline of a run at `nowMs`: one row per step in DAG order, on a shared time axis. */
export function buildTimeline(run: RunDocument, nowMs: number): Timeline {
  const rows = topologicalOrder(run.steps).map((stepId): TimelineRow => {
    const step = run.steps[stepId] as RunStep;
    const reusedFrom = reusedFromRun(step);
    const segments = reusedFrom === undefined ? segmentsOf(step, nowMs) : [];
    const history = step['retryHistory'];
    return {
      stepId,
      status: step.status,
      attempt: step.attempt,
      maxAttempts: step.maxAttempts,
      retries: Array.isArray(history) ? history.length : 0,
      segments,
      queueMs: lengthOf(segments, 'queue'),
      runMs: lengthOf(segments, 'run'),
      reusedFrom,
    };
  });
  const all = rows.flatMap((r) => r.segments);
  const created = ms(run.createdAt) ?? nowMs;
  const startMs = Math.min(created, ...all.map((s) => s.startMs));
  const ended = ms(run.finishedAt);
  const endMs = Math.max(startMs + 1, ended ?? 0, ...all.map((s) => s.endMs));
  return { startMs, endMs, rows };
}

/** Where a segment sits on the axis, in percent of the run's window. */
export function segmentBox(
  timeline: Timeline,
  segment: TimelineSegment,
): { left: number; width: number } {
  const span = timeline.endMs - timeline.startMs;
  const left = ((segment.startMs - timeline.startMs) / span) * 100;
  const width = ((segment.endMs - segment.startMs) / span) * 100;
  // a sub-pixel bar is still visible
  return { left, width: Math.max(width, 0.4) };
}
