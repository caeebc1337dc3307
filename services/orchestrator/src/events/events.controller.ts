import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import { headerValue, type HttpRequest } from '../http/http-types';
import { EventStreams, type StreamRequest } from './event-streams.service';
import type { StreamResponse } from './sse-writer';

/**
 * The resume point: the Last-Event-ID header (EventSource sends it on reconnect), or the
 * `lastEventId` query parameter for clients that cannot set headers on a first connect.
 */
function lastEventIdOf(request: HttpRequest, query: unknown): string | undefined {
  const header = headerValue(request, 'last-event-id');
  if (header !== undefined && header !== '') return header;
  return typeof query === 'string' && query !== '' ? query : undefined;
}

/** Live status (text/event-stream; README "Live events"). */
@Controller()
@Access('user')
export class EventsController {
  constructor(private readonly streams: EventStreams) {}

  /** One run's events until it ends (the stream closes after its terminal status). */
  @Get('runs/:runId/events')
  async runEvents(
    @Param('runId') runId: string,
    @Owner() owner: string,
    @Query('lastEventId') lastEventId: unknown,
    @Req() request: HttpRequest & StreamRequest,
    @Res() response: StreamResponse,
  ): Promise<void> {
    await this.streams.streamRun(runId, owner, lastEventIdOf(request, lastEventId), {
      request,
      response,
    });
  }

  /** Every change of the acting owner's runs. */
  @Get('events/stream')
  ownerEvents(
    @Owner() owner: string,
    @Query('lastEventId') lastEventId: unknown,
    @Req() request: HttpRequest & StreamRequest,
    @Res() response: StreamResponse,
  ): void {
    this.streams.streamOwner(owner, lastEventIdOf(request, lastEventId), { request, response });
  }
}
