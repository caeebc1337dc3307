import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { TdaMetrics } from '@tda/observability';
import { METRICS } from '../orchestrator.tokens';
import { Access } from '../auth/access.decorator';
import type { HttpResponse } from './http-types';

/**
 * Prometheus text exposition. Public like /healthz: aggregate counters labelled by step type,
 * reason, run status and subscription — no ids, no payloads — and scrapers rarely hold tokens.
 */
@Controller()
export class MetricsController {
  constructor(
    @Inject(METRICS) private readonly instruments: Pick<TdaMetrics, 'render' | 'contentType'>,
  ) {}

  @Access('public')
  @Get('metrics')
  async metrics(@Res({ passthrough: true }) response: HttpResponse): Promise<string> {
    response.setHeader('Content-Type', this.instruments.contentType);
    return this.instruments.render();
  }
}
