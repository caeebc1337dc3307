import type { FlowRun, FlowSchedule, RecommendationIndexEntry, Signal } from '@tda/contracts';
import { toTimestamp } from '../time';
import { parseSlotIdempotencyKey, signalIdFor } from './schedule-ids';
import { SIGNAL_SCHEMA_VERSION } from './schedule-lifecycle';

/** What a signal says of the run's recommendation: its recommendations/{recoId} entry fields. */
export interface SignalRecommendation {
  recommendationId: string;
  action: RecommendationIndexEntry['action'];
  signal_strength: number;
  headline: string;
  symbol: string;
  /** The index entry's symbolKey (BTCUSDT): the query key of GET /signals?symbol=. */
  symbolKey: string;
  asOf: string;
}

export interface SignalInput {
  schedule: Pick<FlowSchedule, 'scheduleId' | 'ownerId' | 'minSignalStrength'>;
  run: Pick<FlowRun, 'runId' | 'status' | 'flowKey' | 'idempotencyKey'>;
  /** The run's recommendation; undefined when the run produced none (no such step, or failed). */
  recommendation: SignalRecommendation | undefined;
  /** The signal's createdAt. */
  now: Date;
}

export type SignalNoneReason =
  /** The run was not fired by this schedule (its idempotency key names no slot of it). */
  | 'not_scheduled'
  | 'run_not_succeeded'
  /** The schedule has no minSignalStrength: it emits no signals. */
  | 'no_threshold'
  | 'no_recommendation';

export type SignalDecision =
  /** Create signals/{signal.signalId} once (create-only), then publish it once. */
  | { kind: 'emit'; signal: Signal }
  /** Below the threshold: the run is marked filtered, nothing is emitted. */
  | { kind: 'filtered'; signal_strength: number; minSignalStrength: number }
  | { kind: 'none'; reason: SignalNoneReason };

/**
 * Whether a finished scheduled run emits a signal (flow 7), pure. The slot comes from the run's
 * idempotency key (slotIdempotencyKey), so the signal id is the same for every replay and
 * redelivery of the run's events: with a create-only write, a signal is emitted at most once.
 */
export function decideSignal(input: SignalInput): SignalDecision {
  const { schedule, run, recommendation } = input;
  const slot = parseSlotIdempotencyKey(run.idempotencyKey);
  if (slot === undefined || slot.scheduleId !== schedule.scheduleId) {
    return { kind: 'none', reason: 'not_scheduled' };
  }
  if (run.status !== 'SUCCEEDED') return { kind: 'none', reason: 'run_not_succeeded' };
  const threshold = schedule.minSignalStrength;
  if (threshold === undefined) return { kind: 'none', reason: 'no_threshold' };
  if (recommendation === undefined) return { kind: 'none', reason: 'no_recommendation' };
  if (!(recommendation.signal_strength >= threshold)) {
    return {
      kind: 'filtered',
      signal_strength: recommendation.signal_strength,
      minSignalStrength: threshold,
    };
  }
  const signal: Signal = {
    schemaVersion: SIGNAL_SCHEMA_VERSION,
    signalId: signalIdFor(schedule.scheduleId, slot.slotAt),
    ownerId: schedule.ownerId,
    scheduleId: schedule.scheduleId,
    slotAt: slot.slotAt,
    runId: run.runId,
    flowKey: run.flowKey,
    symbol: recommendation.symbol,
    symbolKey: recommendation.symbolKey,
    asOf: recommendation.asOf,
    recommendationId: recommendation.recommendationId,
    action: recommendation.action,
    signal_strength: recommendation.signal_strength,
    minSignalStrength: threshold,
    headline: recommendation.headline,
    createdAt: toTimestamp(input.now),
  };
  return { kind: 'emit', signal };
}
