import { Controller, Get } from '@nestjs/common';
import { Public } from './bearer-token.guard';
import { buildOpenApiDocument } from './openapi.document';

/** The API description is public: it holds no data, and clients need it before they have a token. */
@Controller()
export class OpenApiController {
  private readonly document = buildOpenApiDocument();

  @Public()
  @Get('openapi.json')
  openApi(): Record<string, unknown> {
    return this.document;
  }
}
