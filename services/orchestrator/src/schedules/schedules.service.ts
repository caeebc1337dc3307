import { Inject, Injectable } from '@nestjs/common';
import { validate, type FlowSchedule } from '@tda/contracts';
import {
  generateScheduleId,
  InvalidRequestError,
  newSchedule,
  nextFireTimes,
  pauseChanges,
  resumeChanges,
  SCHEDULE_ID_PATTERN,
  type FlowCatalogue,
  type ScheduleChanges,
} from '@tda/flow-engine';
import {
  findOwnedSchedule,
  ScheduleNotFoundError,
  ScheduleVersionConflictError,
  SCHEDULE_LIST_LIMIT_MAX,
  type ScheduleListPage,
  type ScheduleStore,
  type VersionedSchedule,
} from '@tda/flow-store';
import {
  CLOCK,
  FLOW_CATALOGUE,
  RANDOM,
  type Clock,
  type RandomSource,
} from '../orchestrator.tokens';
import { strictQuery } from '../runs/run-list-query';
import { SCHEDULE_STORE } from './schedules.tokens';

/** The schema refuses scope.asOf with a bare `not`; this says why, before it. */
function refuseScopeAsOf(body: unknown): void {
  const scope =
    typeof body === 'object' && body !== null
      ? (body as Record<string, unknown>)['scope']
      : undefined;
  if (typeof scope === 'object' && scope !== null && 'asOf' in scope) {
    throw new InvalidRequestError(
      "scope.asOf is not allowed: a scheduled run's asOf is its slot time",
      {
        field: 'scope.asOf',
      },
    );
  }
}

/** Read → decide → conditional write rounds before a lost race is a 409. */
const WRITE_ATTEMPTS = 3;
/** GET /schedules/{id} shows this many upcoming fire times. */
export const NEXT_FIRE_TIMES = 5;

/** A schedule as the API shows it: the document and its next fire times (none while paused). */
export interface ScheduleView extends FlowSchedule {
  nextFireTimes: string[];
}

/**
 * The schedules API (flow 7): the request owner's schedules only (another owner's is a 404 like
 * a missing one). A schedule is checked completely at creation — the cron expression, the time
 * zone, the flow and the scope the flow would accept — so a bad one is a 4xx then, never a
 * failed fire later. Writes are conditional on the version read (no transactions).
 */
@Injectable()
export class SchedulesService {
  constructor(
    @Inject(SCHEDULE_STORE) private readonly store: ScheduleStore,
    @Inject(FLOW_CATALOGUE) private readonly catalogue: FlowCatalogue,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: RandomSource,
  ) {}

  async create(body: unknown, ownerId: string): Promise<ScheduleView> {
    refuseScopeAsOf(body);
    const checked = validate.flowScheduleRequest(body);
    if (!checked.ok) {
      throw new InvalidRequestError('invalid schedule request', { issues: checked.issues });
    }
    const request = checked.value;
    // The flow's own checks (unknown flowKey, a scope it refuses): 400 now, not at the first fire.
    this.catalogue.plan(request.flowKey, { ...request.scope, asOf: this.clock().toISOString() });
    const now = this.clock();
    const built = newSchedule(request, {
      scheduleId: generateScheduleId(this.random),
      ownerId,
      now,
    });
    if (!built.ok) {
      throw new InvalidRequestError(built.message, { field: built.field });
    }
    return this.view((await this.store.create(built.schedule)).schedule);
  }

  async list(
    rawQuery: Readonly<Record<string, unknown>>,
    ownerId: string,
  ): Promise<ScheduleListPage> {
    const { limit, cursor } = strictQuery(rawQuery, ['limit', 'cursor'] as const);
    const parsed = limit === undefined ? 20 : /^[0-9]{1,3}$/.test(limit) ? Number(limit) : NaN;
    if (!(parsed >= 1 && parsed <= SCHEDULE_LIST_LIMIT_MAX)) {
      throw new InvalidRequestError(`limit must be an integer in 1..${SCHEDULE_LIST_LIMIT_MAX}`, {
        parameter: 'limit',
      });
    }
    return this.store.listByOwner({
      ownerId,
      limit: parsed,
      ...(cursor === undefined ? {} : { cursor }),
    });
  }

  async get(ownerId: string, scheduleId: string): Promise<ScheduleView> {
    return this.view((await this.owned(ownerId, scheduleId)).schedule);
  }

  /** The owner's schedule with its version; 404 for a missing one or another owner's. */
  async owned(ownerId: string, scheduleId: string): Promise<VersionedSchedule> {
    const found = SCHEDULE_ID_PATTERN.test(scheduleId)
      ? await findOwnedSchedule(this.store, ownerId, scheduleId)
      : undefined;
    if (found === undefined) throw new ScheduleNotFoundError(scheduleId.slice(0, 100));
    return found;
  }

  pause(ownerId: string, scheduleId: string): Promise<ScheduleView> {
    return this.change(ownerId, scheduleId, (schedule) => pauseChanges(schedule));
  }

  resume(ownerId: string, scheduleId: string): Promise<ScheduleView> {
    return this.change(ownerId, scheduleId, (schedule) => resumeChanges(schedule, this.clock()));
  }

  async delete(ownerId: string, scheduleId: string): Promise<void> {
    await this.conditionally(ownerId, scheduleId, async (found) => {
      await this.store.delete(scheduleId, found.version);
      return found;
    });
  }

  /** pause / resume: a no-op (already in that state) answers the schedule unchanged. */
  private async change(
    ownerId: string,
    scheduleId: string,
    decide: (schedule: FlowSchedule) => ScheduleChanges | null,
  ): Promise<ScheduleView> {
    const written = await this.conditionally(ownerId, scheduleId, async (found) => {
      const changes = decide(found.schedule);
      return changes === null ? found : this.store.update(scheduleId, changes, found.version);
    });
    return this.view(written.schedule);
  }

  private async conditionally(
    ownerId: string,
    scheduleId: string,
    write: (found: VersionedSchedule) => Promise<VersionedSchedule>,
  ): Promise<VersionedSchedule> {
    for (let attempt = 1; ; attempt += 1) {
      const found = await this.owned(ownerId, scheduleId);
      try {
        return await write(found);
      } catch (error) {
        if (!(error instanceof ScheduleVersionConflictError) || attempt >= WRITE_ATTEMPTS)
          throw error;
      }
    }
  }

  view(schedule: FlowSchedule): ScheduleView {
    const next = schedule.enabled ? nextFireTimes(schedule, this.clock(), NEXT_FIRE_TIMES) : [];
    return { ...schedule, nextFireTimes: next.map((d) => d.toISOString()) };
  }
}
