import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { PubSubServer, stepEventsSubscription } from '@tda/messaging';
import { mountConsole } from './console/console-static';
import { requestContextMiddleware } from './http/request-context.middleware';
import { buildOpenApiDocument } from './http/openapi.document';
import { OrchestratorModule } from './orchestrator.module';
import type { OrchestratorModuleOptions } from './orchestrator.options';

export interface OrchestratorAppOptions extends OrchestratorModuleOptions {
  /** PubSubServer: concurrent step-event handlers (default 10). */
  maxInFlight?: number;
  /** PubSubServer: how long close() waits for running handlers (default 8 s). */
  drainTimeoutMs?: number;
  /** Serve Swagger UI at /docs (default true). */
  swaggerUi?: boolean;
}

/**
 * The orchestrator as a Nest app: HTTP API + the step-event consumer (PubSubServer on
 * <prefix>-step-events-sub) connected as a microservice. Not listening yet: call
 * `await app.startAllMicroservices(); await app.listen(port)`, and `app.close()` to stop (drains
 * the consumer, stops the reconciler timer). `app.get(Reconciler).reconcileOnce()` runs a pass
 * on demand. Used by main.ts, the local launcher and tests.
 */
export async function createOrchestratorApp(
  options: OrchestratorAppOptions,
): Promise<INestApplication> {
  const app = await NestFactory.create(OrchestratorModule.forRoot(options), {
    logger: false,
    abortOnError: false,
  });
  const express: { disable(setting: string): void } = app.getHttpAdapter().getInstance();
  express.disable('x-powered-by');
  app.use(requestContextMiddleware);
  mountConsole(app, options.config);
  if (options.swaggerUi ?? true) {
    // Hand-written OpenAPI 3.1 document (the contracts are JSON Schema 2020-12); UI only, the
    // JSON itself is served by OpenApiController at /openapi.json.
    SwaggerModule.setup('docs', app, buildOpenApiDocument() as unknown as OpenAPIObject, {
      raw: false,
      customSiteTitle: 'TDA orchestrator API',
    });
  }
  const server = new PubSubServer({
    broker: options.broker,
    subscriptions: [stepEventsSubscription(options.config.TDA_PUBSUB_PREFIX)],
    logger: options.logger,
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
  });
  // inheritAppConfig: the global guard/filter also wrap the message handler (both let
  // non-HTTP contexts through: the filter rethrows so the transport nacks).
  app.connectMicroservice<MicroserviceOptions>({ strategy: server }, { inheritAppConfig: true });
  return app;
}
