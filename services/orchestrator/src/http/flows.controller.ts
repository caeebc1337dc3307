import { Controller, Get, Inject } from '@nestjs/common';
import type { FlowSummary } from '@tda/flow-engine';
import { ORCHESTRATOR_CONTEXT, type OrchestratorContext } from '../orchestrator.options';

/** The flow catalogue, for clients choosing what to trigger (e.g. `tda flows`). */
@Controller('flows')
export class FlowsController {
  constructor(@Inject(ORCHESTRATOR_CONTEXT) private readonly context: OrchestratorContext) {}

  @Get()
  list(): { flows: FlowSummary[] } {
    return { flows: this.context.catalogue.list() };
  }
}
