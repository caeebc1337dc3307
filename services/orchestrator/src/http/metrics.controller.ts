import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ORCHESTRATOR_CONTEXT, type OrchestratorContext } from '../orchestrator.options';
import { Public } from './bearer-token.guard';
import type { HttpResponse } from './http-types';

/**
 * Prometheus text exposition. Public like /healthz: aggregate counters labelled by step type,
 * reason, run status and subscription — no ids, no payloads — and scrapers rarely hold tokens.
 */
@Controller()
export class MetricsController {
  constructor(@Inject(ORCHESTRATOR_CONTEXT) private readonly context: OrchestratorContext) {}

  @Public()
  @Get('metrics')
  async metrics(@Res({ passthrough: true }) response: HttpResponse): Promise<string> {
    response.setHeader('Content-Type', this.context.metrics.contentType);
    return this.context.metrics.render();
  }
}
