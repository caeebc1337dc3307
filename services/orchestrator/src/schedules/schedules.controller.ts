import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import { TIMESTAMP_PATTERN } from '@tda/contracts';
import { fireNowSlot, InvalidRequestError, slotsBetween } from '@tda/flow-engine';
import type { ScheduleListPage } from '@tda/flow-store';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import type { HttpResponse } from '../http/http-types';
import { CLOCK, type Clock } from '../orchestrator.tokens';
import { ScheduleFiring } from './schedule-firing.service';
import { SchedulesService, type ScheduleView } from './schedules.service';

/** What POST /schedules/{id}/fire answers: the slot's one run. */
export interface FireResponse {
  scheduleId: string;
  slotAt: string;
  runId: string;
  /** false: the slot had been fired before (its existing run). */
  created: boolean;
}

/**
 * Schedules (flow 7, README "Schedules and signals"): the request owner's; another owner's
 * schedule is a 404. GET one shows its next 5 fire times. Fire: now (the current minute's slot)
 * or, with `{"slotAt": …}`, a past slot of the cron expression (backfill); either way the slot's
 * idempotency key makes it one run, and the cursor of the ticker does not move.
 */
@Controller('schedules')
@Access('user')
export class SchedulesController {
  constructor(
    private readonly schedules: SchedulesService,
    private readonly firing: ScheduleFiring,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Post()
  async create(
    @Body() body: unknown,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<ScheduleView> {
    const view = await this.schedules.create(body, owner);
    response.status(201);
    response.setHeader('Location', `/schedules/${view.scheduleId}`);
    return view;
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Owner() owner: string): Promise<ScheduleListPage> {
    return this.schedules.list(query, owner);
  }

  @Get(':scheduleId')
  get(@Param('scheduleId') scheduleId: string, @Owner() owner: string): Promise<ScheduleView> {
    return this.schedules.get(owner, scheduleId);
  }

  @Post(':scheduleId/pause')
  @HttpCode(200)
  pause(@Param('scheduleId') scheduleId: string, @Owner() owner: string): Promise<ScheduleView> {
    return this.schedules.pause(owner, scheduleId);
  }

  @Post(':scheduleId/resume')
  @HttpCode(200)
  resume(@Param('scheduleId') scheduleId: string, @Owner() owner: string): Promise<ScheduleView> {
    return this.schedules.resume(owner, scheduleId);
  }

  @Delete(':scheduleId')
  @HttpCode(204)
  async delete(@Param('scheduleId') scheduleId: string, @Owner() owner: string): Promise<void> {
    await this.schedules.delete(owner, scheduleId);
  }

  @Post(':scheduleId/fire')
  async fire(
    @Param('scheduleId') scheduleId: string,
    @Body() body: unknown,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<FireResponse> {
    const found = await this.schedules.owned(owner, scheduleId);
    const slotAt = this.slotOf(body, found.schedule);
    const { runId, created } = await this.firing.fireSlot(found, slotAt);
    response.status(created ? 201 : 200);
    response.setHeader('Location', `/runs/${encodeURIComponent(runId)}`);
    return { scheduleId, slotAt, runId, created };
  }

  /** The slot to fire: now's minute, or a past slot of the expression (backfill). */
  private slotOf(body: unknown, spec: { cron: string; timeZone: string }): string {
    const now = this.clock();
    const raw =
      typeof body === 'object' && body !== null
        ? (body as Record<string, unknown>)['slotAt']
        : undefined;
    if (raw === undefined) return fireNowSlot(now);
    const at = typeof raw === 'string' && TIMESTAMP_PATTERN.test(raw) ? new Date(raw) : undefined;
    if (at === undefined || Number.isNaN(at.getTime()) || at.getTime() > now.getTime()) {
      throw new InvalidRequestError('slotAt must be an RFC 3339 UTC time (…Z) at or before now', {
        field: 'slotAt',
      });
    }
    const [slot] = slotsBetween(spec, new Date(at.getTime() - 1), at, 1);
    if (slot === undefined || slot.getTime() !== at.getTime()) {
      throw new InvalidRequestError(
        `slotAt ${raw} is not a fire time of '${spec.cron}' (${spec.timeZone})`,
        {
          field: 'slotAt',
        },
      );
    }
    return slot.toISOString();
  }
}
