import type { FlowRun } from '@tda/contracts';
import { latencyStats, type LatencyStats } from '../bench-kit';
import { HandlerClock, type HandlerTimes } from './noop-step';
import type { BusCall, CallLog, StoreCall } from './recording-adapters';

const STEP_STATUS = /^steps\.(.+)\.status$/;
const key = HandlerClock.key;

/** When each step status was committed: `runId\u0000stepId` → status → first commit time. */
export function statusCommits(calls: readonly StoreCall[]): Map<string, Map<string, number>> {
  const commits = new Map<string, Map<string, number>>();
  for (const call of calls) {
    if (call.op !== 'update' || !call.ok || call.patch === undefined || call.runId === undefined) {
      continue;
    }
    for (const [path, value] of Object.entries(call.patch)) {
      const stepId = STEP_STATUS.exec(path)?.[1];
      if (stepId === undefined || typeof value !== 'string') continue;
      const byStatus = commits.get(key(call.runId, stepId)) ?? new Map<string, number>();
      if (!byStatus.has(value)) byStatus.set(value, call.end);
      commits.set(key(call.runId, stepId), byStatus);
    }
  }
  return commits;
}

/** The first publish and the first delivery of each (messageType, run, step). */
function firstBusCalls(calls: readonly BusCall[]): Map<string, BusCall> {
  const first = new Map<string, BusCall>();
  for (const call of calls) {
    const id = `${call.op}\u0000${call.messageType}\u0000${key(call.runId, call.stepId)}`;
    if (!first.has(id)) first.set(id, call);
  }
  return first;
}

/** One hop and where its time went (each segment in ms, per step). */
export interface Hop {
  total: number[];
  segments: Record<string, number[]>;
}

export interface HopSamples {
  /** READY committed → handler entered. */
  dispatch: Hop;
  /** Handler done → SUCCEEDED committed (artifact write + finalize). */
  finalize: Hop;
  /** Last dependency's SUCCEEDED committed → READY committed. */
  advance: Hop;
}

const emptyHop = (...segments: string[]): Hop => ({
  total: [],
  segments: Object.fromEntries(segments.map((s) => [s, [] as number[]])),
});

function push(hop: Hop, total: number, segments: Record<string, number>): void {
  hop.total.push(total);
  for (const [name, value] of Object.entries(segments)) hop.segments[name]?.push(value);
}

/**
 * Cuts every step of `runs` into its hops from the recorded calls and the handler clock. The
 * segments split each hop at the bus: the publish call, publish → delivered, and what the
 * receiving service did after the delivery (its read, decision and conditional write).
 */
export function hopSamples(
  runs: readonly FlowRun[],
  log: CallLog,
  handlers: HandlerClock,
): HopSamples {
  const commits = statusCommits(log.store);
  const bus = firstBusCalls(log.bus);
  const busCall = (op: string, type: string, runId: string, stepId: string) =>
    bus.get(`${op}\u0000${type}\u0000${key(runId, stepId)}`);
  const hops: HopSamples = {
    dispatch: emptyHop(
      'to publish',
      'publish → delivered',
      'delivered → claimed',
      'claimed → handler',
    ),
    finalize: emptyHop('handler → SUCCEEDED'),
    advance: emptyHop('to publish', 'publish → delivered', 'delivered → READY'),
  };
  for (const run of runs) {
    for (const [stepId, step] of Object.entries(run.steps)) {
      const commit = commits.get(key(run.runId, stepId));
      const ready = commit?.get('READY');
      const claimed = commit?.get('RUNNING');
      const succeeded = commit?.get('SUCCEEDED');
      const handler: HandlerTimes | undefined = handlers.times.get(key(run.runId, stepId));
      if (ready === undefined || claimed === undefined || succeeded === undefined || !handler) {
        continue;
      }
      const readyPub = busCall('publish', 'step_ready', run.runId, stepId);
      const readyDel = busCall('deliver', 'step_ready', run.runId, stepId);
      if (readyPub !== undefined && readyDel !== undefined) {
        push(hops.dispatch, handler.entered - ready, {
          'to publish': readyPub.start - ready,
          'publish → delivered': readyDel.end - readyPub.start,
          'delivered → claimed': claimed - readyDel.end,
          'claimed → handler': handler.entered - claimed,
        });
      }
      push(hops.finalize, succeeded - handler.done, {
        'handler → SUCCEEDED': succeeded - handler.done,
      });
      const depsDone = step.dependsOn.map((dep) => ({
        dep,
        at: commits.get(key(run.runId, dep))?.get('SUCCEEDED'),
      }));
      const last = depsDone.reduce<{ dep: string; at: number } | undefined>(
        (latest, d) =>
          d.at !== undefined && (latest === undefined || d.at > latest.at)
            ? { dep: d.dep, at: d.at }
            : latest,
        undefined,
      );
      if (last === undefined) continue;
      const eventPub = busCall('publish', 'step_event', run.runId, last.dep);
      const eventDel = busCall('deliver', 'step_event', run.runId, last.dep);
      if (eventPub === undefined || eventDel === undefined) continue;
      push(hops.advance, ready - last.at, {
        'to publish': eventPub.start - last.at,
        'publish → delivered': eventDel.end - eventPub.start,
        'delivered → READY': ready - eventDel.end,
      });
    }
  }
  return hops;
}

export interface HopStats extends LatencyStats {
  samples: number;
  /** p50 of each segment. */
  segments: Record<string, number>;
}

export function hopStats(hop: Hop): HopStats {
  const segments: Record<string, number> = {};
  for (const [name, values] of Object.entries(hop.segments)) {
    segments[name] = values.length === 0 ? 0 : latencyStats(values).p50;
  }
  return { samples: hop.total.length, ...latencyStats(hop.total), segments };
}
