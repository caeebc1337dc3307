import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { cutBusyConnectionsAfter } from '@tda/service-runtime';
import { Server } from 'node:http';
import { HTTP_DRAIN_MS } from '../orchestrator.tokens';

/**
 * Bounds the HTTP part of app.close(): requests in progress get HTTP_DRAIN_MS to finish, then
 * their connections are cut (the event streams end themselves in the same phase).
 */
@Injectable()
export class HttpDrain implements BeforeApplicationShutdown {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(HTTP_DRAIN_MS) private readonly graceMs: number,
  ) {}

  beforeApplicationShutdown(): void {
    const server: unknown = this.adapterHost.httpAdapter?.getHttpServer();
    if (server instanceof Server) cutBusyConnectionsAfter(server, this.graceMs);
  }
}
