import { Access } from '../auth/access.decorator';
import { Controller, Get, Inject } from '@nestjs/common';
import type { FlowCatalogue, FlowSummary } from '@tda/flow-engine';
import { FLOW_CATALOGUE } from '../orchestrator.tokens';

/** The flow catalogue, for clients choosing what to trigger (e.g. `tda flows`). */
@Controller('flows')
@Access('user')
export class FlowsController {
  constructor(@Inject(FLOW_CATALOGUE) private readonly catalogue: Pick<FlowCatalogue, 'list'>) {}

  @Get()
  list(): { flows: FlowSummary[] } {
    return { flows: this.catalogue.list() };
  }
}
