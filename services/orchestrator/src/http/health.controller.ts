import { Controller, Get } from '@nestjs/common';
import { Access } from '../auth/access.decorator';

/** Liveness for Cloud Run / the launcher: no auth, no dependencies touched. */
@Controller()
export class HealthController {
  @Access('public')
  @Get('healthz')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
