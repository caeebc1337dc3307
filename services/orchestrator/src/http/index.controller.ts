import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { RecommendationIndexEntry, ReportIndexEntry } from '@tda/contracts';
import type { RecommendationListPage, ReportListPage } from '@tda/report-index';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import { IndexBackfill, type IndexBackfillReport } from '../index/index-backfill.service';
import { IndexQueries } from '../index/index-queries.service';

/**
 * GET /reports, /reports/{reportId}: the reports index (README "Reports and recommendations
 * index"), the acting owner's entries only.
 */
@Controller('reports')
@Access('user')
export class ReportsController {
  constructor(private readonly queries: IndexQueries) {}

  @Get()
  list(@Query() query: Record<string, unknown>, @Owner() owner: string): Promise<ReportListPage> {
    return this.queries.listReports(query, owner);
  }

  @Get(':reportId')
  get(@Param('reportId') reportId: string, @Owner() owner: string): Promise<ReportIndexEntry> {
    return this.queries.getReport(reportId, owner);
  }
}

/** GET /recommendations, /recommendations/{recoId}: the recommendations index, per owner. */
@Controller('recommendations')
@Access('user')
export class RecommendationsController {
  constructor(private readonly queries: IndexQueries) {}

  @Get()
  list(
    @Query() query: Record<string, unknown>,
    @Owner() owner: string,
  ): Promise<RecommendationListPage> {
    return this.queries.listRecommendations(query, owner);
  }

  @Get(':recoId')
  get(@Param('recoId') recoId: string, @Owner() owner: string): Promise<RecommendationIndexEntry> {
    return this.queries.getRecommendation(recoId, owner);
  }
}

/** POST /admin/index/backfill {apply?}: a dry run unless apply is true (admin). */
@Controller('admin/index')
@Access('admin')
export class AdminIndexController {
  constructor(private readonly backfill: IndexBackfill) {}

  @Post('backfill')
  @HttpCode(200)
  run(@Body() body: unknown): Promise<IndexBackfillReport> {
    return this.backfill.backfill(body);
  }
}
