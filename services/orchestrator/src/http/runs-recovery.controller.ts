import { Body, Controller, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import { RunRecoveryService } from '../recovery/run-recovery.service';
import type { HttpResponse } from './http-types';

/**
 * Recovery operations on runs (README "Admin and recovery operations"): retry FAILED steps in
 * place, rerun from a step into a new run. Bearer token like every /runs route.
 */
@Controller('runs')
export class RunsRecoveryController {
  constructor(private readonly recovery: RunRecoveryService) {}

  /** 200 with the run, RUNNING again (also for a repeated click); 404 / 409 otherwise. */
  @Post(':runId/steps/:stepId/retry')
  @HttpCode(200)
  retryStep(@Param('runId') runId: string, @Param('stepId') stepId: string): Promise<FlowRun> {
    return this.recovery.retry(runId, stepId);
  }

  /** Retries every FAILED step of the run together (fail-fast may have failed several). */
  @Post(':runId/retry')
  @HttpCode(200)
  retryRun(@Param('runId') runId: string): Promise<FlowRun> {
    return this.recovery.retry(runId);
  }

  /** 201 + Location with the NEW run (the source is untouched). */
  @Post(':runId/rerun')
  async rerun(
    @Param('runId') runId: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<FlowRun> {
    const run = await this.recovery.rerun(runId, body);
    response.status(201);
    response.setHeader('Location', `/runs/${encodeURIComponent(run.runId)}`);
    return run;
  }
}
