import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { isTdaError, type FlowSchedule, type TriggerRequest } from '@tda/contracts';
import {
  decideTick,
  failedFireChanges,
  firedRunChanges,
  isTerminalRunStatus,
  slotIdempotencyKey,
  type ActiveRun,
  type ScheduleChanges,
} from '@tda/flow-engine';
import {
  ScheduleVersionConflictError,
  type FlowRunStore,
  type ScheduleStore,
  type VersionedSchedule,
} from '@tda/flow-store';
import { describeError, logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import { CLOCK, LOGGER, ORCHESTRATOR_CONFIG, RUN_STORE, type Clock } from '../orchestrator.tokens';
import { RunTrigger } from '../runs/run-trigger.service';
import { SCHEDULE_STORE } from './schedules.tokens';

/** Due schedules one tick looks at (the rest wait for the next tick). */
const TICK_BATCH = 100;
/** Rounds of read → decide → conditional write for recording a fired run. */
const RECORD_ATTEMPTS = 3;

/** What one tick did (POST /admin/schedules/tick answers it). */
export interface TickReport {
  at: string;
  due: number;
  fired: { scheduleId: string; slotAt: string; runId: string }[];
  skipped: { scheduleId: string; slotAt: string; outcome: string }[];
  failed: { scheduleId: string; slotAt: string; code: string }[];
  /** Lost a race for the slot to another instance, or deferred (overlap unknown). */
  unchanged: number;
}

type FireResult = { runId: string } | { error: { code: string; message: string; final: boolean } };

/**
 * Fires due schedule slots (flow 7): an in-process ticker locally (TDA_SCHEDULE_TICK_MS), Cloud
 * Scheduler calling POST /admin/schedules/tick in GCP. Per due schedule: read → decideTick →
 * claim the slot with a conditional write → trigger the run with the slot's idempotency key →
 * record the run. Two instances, a retried call or a restart between claim and record all end
 * with one run per slot (the loser of the claim writes nothing; a claimed slot without a run is
 * completed with the same key).
 */
@Injectable()
export class ScheduleFiring implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<TickReport> | undefined;
  private stopped = false;

  constructor(
    @Inject(SCHEDULE_STORE) private readonly schedules: ScheduleStore,
    @Inject(RUN_STORE) private readonly runs: FlowRunStore,
    private readonly trigger: RunTrigger,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_SCHEDULE_TICK_MS'>,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduleTick();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** One tick now (or joins the one in progress). */
  tick(): Promise<TickReport> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * Fires `slotAt` of a schedule outside the ticker (fire-now, backfill): the same idempotency
   * key, so it is the slot's one run whoever fires it; the cursor does not move.
   */
  async fireSlot(
    found: VersionedSchedule,
    slotAt: string,
  ): Promise<{ runId: string; created: boolean }> {
    const { run, created } = await this.trigger.triggerScheduled(
      requestFor(found.schedule, slotAt),
      found.schedule.ownerId,
    );
    await this.record(found.schedule.scheduleId, (schedule) =>
      schedule.lastRunId === run.runId ? null : { lastRunId: run.runId },
    );
    return { runId: run.runId, created };
  }

  private scheduleTick(): void {
    const interval = this.config.TDA_SCHEDULE_TICK_MS;
    if (interval <= 0 || this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick()
        .catch((error: unknown) =>
          logEvent(this.logger, 'error', 'schedule_tick_failed', { error: describeError(error) }),
        )
        .finally(() => this.scheduleTick());
    }, interval);
    this.timer.unref();
  }

  private async pass(): Promise<TickReport> {
    const now = this.clock();
    const due = await this.schedules.listDue(now, TICK_BATCH);
    const report: TickReport = {
      at: now.toISOString(),
      due: due.length,
      fired: [],
      skipped: [],
      failed: [],
      unchanged: 0,
    };
    for (const found of due) {
      if (this.stopped) break;
      await this.fireDue(found, now, report);
    }
    if (report.fired.length + report.skipped.length + report.failed.length > 0) {
      logEvent(this.logger, 'info', 'schedule_tick_finished', {
        due: report.due,
        fired: report.fired.length,
        skipped: report.skipped.length,
        failed: report.failed.length,
      });
    }
    return report;
  }

  /** One due schedule: decide, claim, trigger, record. A lost race is nothing to do. */
  private async fireDue(found: VersionedSchedule, now: Date, report: TickReport): Promise<void> {
    const { schedule } = found;
    const decision = decideTick(schedule, now, await this.activeRun(schedule));
    let slotAt: string;
    switch (decision.kind) {
      case 'disabled':
      case 'deferred':
        report.unchanged += 1;
        return;
      case 'not_due':
        if (decision.changes !== null) await this.claim(found, decision.changes);
        report.unchanged += 1;
        return;
      case 'skip':
        if (await this.claim(found, decision.changes)) {
          report.skipped.push({
            scheduleId: schedule.scheduleId,
            slotAt: decision.slotAt,
            outcome: decision.outcome,
          });
          logEvent(this.logger, 'info', 'schedule_skipped', {
            scheduleId: schedule.scheduleId,
            slotAt: decision.slotAt,
            outcome: decision.outcome,
            missed: decision.missed,
          });
        } else report.unchanged += 1;
        return;
      case 'fire':
        if (!(await this.claim(found, decision.changes))) {
          report.unchanged += 1;
          return;
        }
        slotAt = decision.slotAt;
        break;
      case 'complete_fire':
        slotAt = decision.slotAt;
        break;
    }
    await this.fireClaimed(schedule, slotAt, report);
  }

  /** The claimed slot's run (same key: one run), then the record of it or of a final refusal. */
  private async fireClaimed(
    schedule: FlowSchedule,
    slotAt: string,
    report: TickReport,
  ): Promise<void> {
    const result = await this.triggerSlot(schedule, slotAt);
    const { scheduleId } = schedule;
    if ('runId' in result) {
      await this.record(scheduleId, (current) => firedRunChanges(current, slotAt, result.runId));
      report.fired.push({ scheduleId, slotAt, runId: result.runId });
      logEvent(this.logger, 'info', 'schedule_fired', { scheduleId, slotAt, runId: result.runId });
      return;
    }
    report.failed.push({ scheduleId, slotAt, code: result.error.code });
    logEvent(this.logger, 'warn', 'schedule_fire_failed', { scheduleId, slotAt, ...result.error });
    // A retryable failure leaves the claim: the next tick completes it with the same key.
    if (result.error.final) {
      await this.record(scheduleId, (current) =>
        failedFireChanges(current, slotAt, `${result.error.code}: ${result.error.message}`),
      );
    }
  }

  private async triggerSlot(schedule: FlowSchedule, slotAt: string): Promise<FireResult> {
    try {
      const { run } = await this.trigger.triggerScheduled(
        requestFor(schedule, slotAt),
        schedule.ownerId,
      );
      return { runId: run.runId };
    } catch (error) {
      if (!isTdaError(error)) throw error;
      return {
        error: { code: error.code, message: error.message.slice(0, 200), final: !error.retryable },
      };
    }
  }

  /** The conditional cursor write; false when another instance decided first. */
  private async claim(found: VersionedSchedule, changes: ScheduleChanges): Promise<boolean> {
    try {
      await this.schedules.update(found.schedule.scheduleId, changes, found.version);
      return true;
    } catch (error) {
      if (error instanceof ScheduleVersionConflictError) return false;
      throw error;
    }
  }

  /** Read → decide → conditional write, re-read on a conflict; a deleted schedule is left be. */
  private async record(
    scheduleId: string,
    decide: (schedule: FlowSchedule) => ScheduleChanges | null,
  ): Promise<void> {
    for (let attempt = 1; attempt <= RECORD_ATTEMPTS; attempt += 1) {
      const found = await this.schedules.get(scheduleId);
      const changes = found === null ? null : decide(found.schedule);
      if (found === null || changes === null) return;
      if (await this.claim(found, changes)) return;
    }
  }

  /** overlap 'skip': is the previous run of this schedule still active? */
  private async activeRun(schedule: FlowSchedule): Promise<ActiveRun> {
    if (schedule.overlap !== 'skip' || schedule.lastRunId === undefined) return false;
    try {
      const run = await this.runs.get(schedule.lastRunId);
      return run !== null && !isTerminalRunStatus(run.run.status);
    } catch {
      return 'unknown';
    }
  }
}

/** The trigger of a slot: the schedule's flow and scope at asOf = the slot, keyed by the slot. */
export function requestFor(schedule: FlowSchedule, slotAt: string): TriggerRequest {
  return {
    flowKey: schedule.flowKey,
    scope: { ...schedule.scope, asOf: slotAt } as TriggerRequest['scope'],
    idempotencyKey: slotIdempotencyKey(schedule.scheduleId, slotAt),
    trigger: { type: 'SCHEDULER', source: 'schedule', scheduleId: schedule.scheduleId, slotAt },
  };
}
