import { Controller, Get } from '@nestjs/common';
import { Public } from './bearer-token.guard';

/** Liveness for Cloud Run / the launcher: no auth, no dependencies touched. */
@Controller()
export class HealthController {
  @Public()
  @Get('healthz')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
