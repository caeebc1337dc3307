import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { EvaluationPage, EvaluationView } from '@tda/contracts';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import type { HttpResponse } from '../http/http-types';
import { EvaluationsService } from './evaluations.service';

/**
 * Walk-forward evaluations of recommendations (README "Recommendations scored against what
 * happened"): the request owner's; another owner's evaluation is a 404.
 */
@Controller('evaluations')
@Access('user')
export class EvaluationsController {
  constructor(private readonly evaluations: EvaluationsService) {}

  /** 201 + Location for a new evaluation; 200 with the existing one for a repeated key. */
  @Post('recommendations')
  async create(
    @Body() body: unknown,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<EvaluationView> {
    const { view, created } = await this.evaluations.create(body, owner);
    response.status(created ? 201 : 200);
    response.setHeader('Location', `/evaluations/${encodeURIComponent(view.evaluationId)}`);
    return view;
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Owner() owner: string): Promise<EvaluationPage> {
    return this.evaluations.list(query, owner);
  }

  @Get(':evaluationId')
  get(@Param('evaluationId') id: string, @Owner() owner: string): Promise<EvaluationView> {
    return this.evaluations.get(id, owner);
  }

  @Post(':evaluationId/cancel')
  @HttpCode(200)
  cancel(@Param('evaluationId') id: string, @Owner() owner: string): Promise<EvaluationView> {
    return this.evaluations.cancel(id, owner);
  }
}
