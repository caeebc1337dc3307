import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import type { RecommendationIndexEntry, ReportIndexEntry } from '@tda/contracts';
import type { RecommendationListPage, ReportListPage } from '@tda/report-index';
import type { OrchestratorConfig } from '../config';
import { IndexBackfill, type IndexBackfillReport } from '../index/index-backfill.service';
import { IndexQueries } from '../index/index-queries.service';
import { ORCHESTRATOR_CONFIG } from '../orchestrator.tokens';
import type { HttpRequest } from './http-types';
import { requestOwner } from './request-owner';

type OwnerConfig = Pick<OrchestratorConfig, 'TDA_DEFAULT_OWNER'>;

/**
 * GET /reports, /reports/{reportId}: the reports index (README "Reports and recommendations
 * index"), the request owner's entries only.
 */
@Controller('reports')
export class ReportsController {
  constructor(
    private readonly queries: IndexQueries,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OwnerConfig,
  ) {}

  @Get()
  list(
    @Query() query: Record<string, unknown>,
    @Req() request: HttpRequest,
  ): Promise<ReportListPage> {
    return this.queries.listReports(query, requestOwner(request, this.config.TDA_DEFAULT_OWNER));
  }

  @Get(':reportId')
  get(@Param('reportId') reportId: string, @Req() request: HttpRequest): Promise<ReportIndexEntry> {
    return this.queries.getReport(reportId, requestOwner(request, this.config.TDA_DEFAULT_OWNER));
  }
}

/** GET /recommendations, /recommendations/{recoId}: the recommendations index, per owner. */
@Controller('recommendations')
export class RecommendationsController {
  constructor(
    private readonly queries: IndexQueries,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OwnerConfig,
  ) {}

  @Get()
  list(
    @Query() query: Record<string, unknown>,
    @Req() request: HttpRequest,
  ): Promise<RecommendationListPage> {
    return this.queries.listRecommendations(
      query,
      requestOwner(request, this.config.TDA_DEFAULT_OWNER),
    );
  }

  @Get(':recoId')
  get(
    @Param('recoId') recoId: string,
    @Req() request: HttpRequest,
  ): Promise<RecommendationIndexEntry> {
    return this.queries.getRecommendation(
      recoId,
      requestOwner(request, this.config.TDA_DEFAULT_OWNER),
    );
  }
}

/** POST /admin/index/backfill {apply?}: a dry run unless apply is true (bearer token). */
@Controller('admin/index')
export class AdminIndexController {
  constructor(private readonly backfill: IndexBackfill) {}

  @Post('backfill')
  @HttpCode(200)
  run(@Body() body: unknown): Promise<IndexBackfillReport> {
    return this.backfill.backfill(body);
  }
}
