import type { CallLog, StoreCall } from './recording-adapters';

/** What a batch of runs asked of the run store and the bus, counted at the adapters. */
export interface CallCounts {
  /** Run documents read: get() calls plus the documents list() queries returned. */
  reads: number;
  /** list() and count() queries (admission's, the quota's); what they bill is in `reads`. */
  queries: number;
  /** Committed create() and update() of a run document. */
  writes: number;
  /** update() refused by its precondition (a re-read and re-decision follows). */
  conflicts: number;
  /** Messages published, by messageType. */
  messages: Record<string, number>;
  /** The same counts by service (orchestrator, worker-bench-noop). */
  byService: Record<string, { reads: number; writes: number; conflicts: number; queries: number }>;
}

export function countCalls(log: CallLog): CallCounts {
  const counts: CallCounts = {
    reads: 0,
    queries: 0,
    writes: 0,
    conflicts: 0,
    messages: {},
    byService: {},
  };
  for (const call of log.store) {
    const service = (counts.byService[call.service] ??= {
      reads: 0,
      writes: 0,
      conflicts: 0,
      queries: 0,
    });
    const field = fieldOf(call);
    counts[field] += 1;
    service[field] += 1;
    counts.reads += call.docs ?? 0;
    service.reads += call.docs ?? 0;
  }
  for (const call of log.bus) {
    if (call.op !== 'publish') continue;
    counts.messages[call.messageType] = (counts.messages[call.messageType] ?? 0) + 1;
  }
  return counts;
}

function fieldOf(call: StoreCall): 'reads' | 'queries' | 'writes' | 'conflicts' {
  if (call.op === 'get') return 'reads';
  if (call.op === 'list' || call.op === 'count') return 'queries';
  return call.ok ? 'writes' : 'conflicts';
}

/** Counts divided by `steps` (the per-step cost of a batch). */
export function perStep(counts: CallCounts, steps: number): Record<string, number> {
  const messages = Object.values(counts.messages).reduce((a, b) => a + b, 0);
  return {
    reads: counts.reads / steps,
    queries: counts.queries / steps,
    writes: counts.writes / steps,
    conflicts: counts.conflicts / steps,
    messages: messages / steps,
  };
}

export interface DocumentWriteRate {
  /** Most committed writes to one run document within any one second. */
  peakPerSecond: number;
  /** Writes / the document's write span, averaged over the runs. */
  meanPerSecond: number;
}

/** Writes per second to each run document (Firestore sustains about one per document). */
export function documentWriteRate(log: CallLog): DocumentWriteRate {
  const byRun = new Map<string, number[]>();
  for (const call of log.store) {
    if (call.runId === undefined || !call.ok || (call.op !== 'update' && call.op !== 'create'))
      continue;
    const times = byRun.get(call.runId) ?? [];
    times.push(call.end);
    byRun.set(call.runId, times);
  }
  let peak = 0;
  const means: number[] = [];
  for (const times of byRun.values()) {
    times.sort((a, b) => a - b);
    let from = 0;
    for (let to = 0; to < times.length; to += 1) {
      while ((times[to] as number) - (times[from] as number) >= 1000) from += 1;
      peak = Math.max(peak, to - from + 1);
    }
    const span = ((times.at(-1) as number) - (times[0] as number)) / 1000;
    if (times.length > 1 && span > 0) means.push(times.length / Math.max(span, 1));
  }
  const meanPerSecond = means.length === 0 ? 0 : means.reduce((a, b) => a + b, 0) / means.length;
  return { peakPerSecond: peak, meanPerSecond };
}
