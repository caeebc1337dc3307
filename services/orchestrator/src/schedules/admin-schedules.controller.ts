import { Controller, HttpCode, Post } from '@nestjs/common';
import { Access } from '../auth/access.decorator';
import { ScheduleFiring, type TickReport } from './schedule-firing.service';

/**
 * One schedule tick on demand: what Cloud Scheduler's `tda-schedules-tick` job calls every
 * minute in GCP (OIDC admin, like /admin/reconcile). Idempotent per (schedule, slot): a retried
 * or overlapping call fires nothing twice.
 */
@Controller('admin/schedules')
@Access('admin')
export class AdminSchedulesController {
  constructor(private readonly firing: ScheduleFiring) {}

  @Post('tick')
  @HttpCode(200)
  tick(): Promise<TickReport> {
    return this.firing.tick();
  }
}
