import { Controller, Get } from '@nestjs/common';
import { Access } from '../auth/access.decorator';
import { buildOpenApiDocument } from './openapi.document';

/** The API description is public: it holds no data, and clients need it before they have a token. */
@Controller()
export class OpenApiController {
  private readonly document = buildOpenApiDocument();

  @Access('public')
  @Get('openapi.json')
  openApi(): Record<string, unknown> {
    return this.document;
  }
}
