import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { BacktestJob, BacktestJobPage, BacktestTop } from '@tda/contracts';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import type { HttpResponse } from '../http/http-types';
import { BacktestJobsService } from './backtest-jobs.service';

/**
 * Backtest jobs (seed 003, README "Backtests"): the request owner's; another owner's job is a
 * 404. Mounted only when TDA_BACKTEST_JOBS_ENABLED (seed 003 enable toggle).
 */
@Controller('backtests/jobs')
@Access('user')
export class BacktestJobsController {
  constructor(private readonly jobs: BacktestJobsService) {}

  /** 201 + Location for a new job; 200 with the existing job for a repeated idempotencyKey. */
  @Post()
  async create(
    @Body() body: unknown,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<BacktestJob> {
    const { job, created } = await this.jobs.create(body, owner);
    response.status(created ? 201 : 200);
    response.setHeader('Location', `/backtests/jobs/${encodeURIComponent(job.job_id)}`);
    return job;
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Owner() owner: string): Promise<BacktestJobPage> {
    return this.jobs.list(query, owner);
  }

  @Get(':jobId')
  get(@Param('jobId') jobId: string, @Owner() owner: string): Promise<BacktestJob> {
    return this.jobs.get(jobId, owner);
  }

  @Get(':jobId/top')
  top(
    @Param('jobId') jobId: string,
    @Query() query: Record<string, unknown>,
    @Owner() owner: string,
  ): Promise<BacktestTop> {
    return this.jobs.top(jobId, owner, query);
  }

  @Post(':jobId/cancel')
  @HttpCode(200)
  cancel(@Param('jobId') jobId: string, @Owner() owner: string): Promise<BacktestJob> {
    return this.jobs.cancel(jobId, owner);
  }
}
