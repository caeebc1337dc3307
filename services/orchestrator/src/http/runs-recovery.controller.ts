import { Body, Controller, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import { RunRecoveryService } from '../recovery/run-recovery.service';
import type { HttpResponse } from './http-types';

/**
 * Recovery operations on runs (README "Admin and recovery operations"): retry FAILED steps in
 * place, rerun from a step into a new run. The acting owner's runs only, like every /runs route.
 */
@Controller('runs')
@Access('user')
export class RunsRecoveryController {
  constructor(private readonly recovery: RunRecoveryService) {}

  /** 200 with the run, RUNNING again (also for a repeated click); 404 / 409 otherwise. */
  @Post(':runId/steps/:stepId/retry')
  @HttpCode(200)
  retryStep(
    @Param('runId') runId: string,
    @Param('stepId') stepId: string,
    @Owner() owner: string,
  ): Promise<FlowRun> {
    return this.recovery.retry(runId, owner, stepId);
  }

  /** Retries every FAILED step of the run together (fail-fast may have failed several). */
  @Post(':runId/retry')
  @HttpCode(200)
  retryRun(@Param('runId') runId: string, @Owner() owner: string): Promise<FlowRun> {
    return this.recovery.retry(runId, owner);
  }

  /** 201 + Location with the NEW run (the source is untouched). */
  @Post(':runId/rerun')
  async rerun(
    @Param('runId') runId: string,
    @Body() body: unknown,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<FlowRun> {
    const run = await this.recovery.rerun(runId, body, owner);
    response.status(201);
    response.setHeader('Location', `/runs/${encodeURIComponent(run.runId)}`);
    return run;
  }
}
