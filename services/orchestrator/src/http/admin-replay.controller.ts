import { Access } from '../auth/access.decorator';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ReplayService,
  type ReplayResponse,
  type SnapshotResponse,
} from '../recovery/replay.service';

/** Replay (seek) and snapshots under /admin (bearer token; README "Admin and recovery operations"). */
@Controller('admin')
@Access('admin')
export class AdminReplayController {
  constructor(private readonly replays: ReplayService) {}

  /**
   * {subscription, time | snapshot, dryRun}: 200 with the preview; unless dryRun, the
   * subscription has been sought when it answers (`seeked: true`).
   */
  @Post('replay')
  @HttpCode(200)
  replay(@Body() body: unknown): Promise<ReplayResponse> {
    return this.replays.replay(body);
  }

  /** {subscription, name}: 201 with the snapshot (expireTime, replaysFrom). */
  @Post('snapshots')
  @HttpCode(201)
  createSnapshot(@Body() body: unknown): Promise<SnapshotResponse> {
    return this.replays.createSnapshot(body);
  }
}
