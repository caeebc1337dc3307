import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun, RunSignal, Signal } from '@tda/contracts';
import { decideSignal, type SignalDecision, type SignalRecommendation } from '@tda/flow-engine';
import type { ScheduleStore, SignalStore } from '@tda/flow-store';
import { BrokerPublisher, signalsTopic, type MessageBroker } from '@tda/messaging';
import { logEvent, type Logger } from '@tda/observability';
import type { ReportIndexStore } from '@tda/report-index';
import { RunWriter } from '../dispatch/run-writer.service';
import { IndexWriter } from '../index/index-writer.service';
import type { OrchestratorConfig } from '../config';
import {
  CLOCK,
  LOGGER,
  MESSAGE_BROKER,
  ORCHESTRATOR_CONFIG,
  REPORT_INDEX,
  type Clock,
} from '../orchestrator.tokens';
import { SCHEDULE_STORE, SIGNAL_STORE } from './schedules.tokens';

/**
 * Flow 7 signals: when a scheduled run SUCCEEDED, its recommendation is held against the
 * schedule's minSignalStrength (flow-engine decideSignal) — at or above it the run emits a
 * signal: `signals/{signalId}` (create-only, the id derives from schedule and slot) and one
 * message on `<prefix>-signals`, then `publishedAt`; below it the run is marked filtered. The
 * outcome is written on the run (`run.signal`) by its single writer path, once. Replay and
 * redelivery find the signal (or run.signal) and emit nothing again; a crash between the
 * publish and `publishedAt` publishes again on the next delivery, with the same signalId for
 * consumers to drop.
 */
@Injectable()
export class SignalEmitter {
  private readonly publisher: BrokerPublisher;

  constructor(
    @Inject(SCHEDULE_STORE) private readonly schedules: ScheduleStore,
    @Inject(SIGNAL_STORE) private readonly signals: SignalStore,
    @Inject(REPORT_INDEX) private readonly index: ReportIndexStore,
    @Inject(MESSAGE_BROKER) broker: MessageBroker,
    private readonly writer: RunWriter,
    private readonly indexWriter: IndexWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(ORCHESTRATOR_CONFIG) config: Pick<OrchestratorConfig, 'TDA_PUBSUB_PREFIX'>,
  ) {
    this.publisher = new BrokerPublisher({ publisher: broker, prefix: config.TDA_PUBSUB_PREFIX });
    this.prefix = config.TDA_PUBSUB_PREFIX;
  }

  private readonly prefix: string;

  /** After a run's step event: a finished scheduled run without a signal outcome gets one. */
  async afterRun(run: FlowRun): Promise<RunSignal['status'] | undefined> {
    const scheduleId = run.trigger.scheduleId;
    if (scheduleId === undefined || run.status !== 'SUCCEEDED') return undefined;
    const published =
      run.signal?.signalId === undefined ? undefined : await this.signals.get(run.signal.signalId);
    if (
      run.signal !== undefined &&
      (published === undefined || published?.publishedAt !== undefined)
    ) {
      return run.signal.status;
    }
    const schedule = (await this.schedules.get(scheduleId))?.schedule;
    const decision: SignalDecision =
      schedule === undefined
        ? { kind: 'none', reason: 'not_scheduled' }
        : decideSignal({
            schedule,
            run,
            recommendation: await this.recommendationOf(run),
            now: this.clock(),
          });
    if (decision.kind === 'emit') await this.emit(decision.signal);
    const outcome = outcomeOf(decision, this.clock());
    await this.recordOnRun(run.runId, outcome);
    return outcome.status;
  }

  private async emit(signal: Signal): Promise<void> {
    const created = await this.signals.createOnce(signal);
    const stored = created === 'created' ? signal : await this.signals.get(signal.signalId);
    if (stored?.publishedAt !== undefined) return;
    await this.publisher.publishJson(signalsTopic(this.prefix), stored ?? signal, {
      messageType: 'signal',
      signalId: signal.signalId,
      scheduleId: signal.scheduleId,
      runId: signal.runId,
    });
    await this.signals.markPublished(signal.signalId, this.clock());
    logEvent(this.logger, 'info', 'signal_emitted', {
      signalId: signal.signalId,
      scheduleId: signal.scheduleId,
      runId: signal.runId,
      action: signal.action,
      signal_strength: signal.signal_strength,
    });
  }

  /** run.signal through the run's writer path: written once, a later decision is a noop. */
  private async recordOnRun(runId: string, outcome: RunSignal): Promise<void> {
    await this.writer.apply(
      runId,
      (run) =>
        run.signal === undefined
          ? { kind: 'write', patch: { signal: outcome }, result: undefined }
          : { kind: 'noop', reason: 'signal_decided', result: undefined },
      'step_event',
      'log',
    );
  }

  /**
   * The index entry of the run's SUCCEEDED recommendation step: usually written by the same
   * step event just before; else written now (create-only, the index's one writer).
   */
  private async recommendationOf(run: FlowRun): Promise<SignalRecommendation | undefined> {
    const found = Object.entries(run.steps).find(
      ([, s]) => s.stepType === 'LLM_RECOMMENDATION' && s.status === 'SUCCEEDED',
    );
    if (found === undefined) return undefined;
    const indexed = await this.indexWriter.indexStep(run, found[0]);
    const recoId = indexed.outcome === 'not_indexable' ? undefined : indexed.id;
    const entry = recoId === undefined ? null : await this.index.getRecommendation(recoId);
    if (entry === null) return undefined;
    return {
      recommendationId: entry.recoId,
      action: entry.action,
      signal_strength: entry.signal_strength,
      headline: entry.headline,
      symbol: entry.symbol,
      symbolKey: entry.symbolKey,
      asOf: entry.asOf,
    };
  }
}

function outcomeOf(decision: SignalDecision, now: Date): RunSignal {
  const decidedAt = now.toISOString();
  switch (decision.kind) {
    case 'emit':
      return {
        status: 'emitted',
        signalId: decision.signal.signalId,
        signal_strength: decision.signal.signal_strength,
        minSignalStrength: decision.signal.minSignalStrength,
        decidedAt,
      };
    case 'filtered':
      return {
        status: 'filtered',
        signal_strength: decision.signal_strength,
        minSignalStrength: decision.minSignalStrength,
        decidedAt,
      };
    case 'none':
      return { status: 'none', reason: decision.reason, decidedAt };
  }
}
