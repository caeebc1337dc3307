import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { AccountListPage } from '@tda/accounts';
import type { Account } from '@tda/contracts';
import { etagOf, parseIfMatch } from '../accounts/account-request';
import { AccountsService } from '../accounts/accounts.service';
import type { OrchestratorConfig } from '../config';
import { ORCHESTRATOR_CONFIG } from '../orchestrator.tokens';
import { headerValue, type HttpRequest, type HttpResponse } from './http-types';
import { requestOwner } from './request-owner';

/**
 * Accounts (README "Accounts"): the request owner's paper accounts, and documents standing for
 * the live exchange account. Reads answer the version as `ETag`; PUT and DELETE honour
 * `If-Match` (409 when the account changed since). Another owner's account is a 404.
 */
@Controller('accounts')
export class AccountsController {
  constructor(
    private readonly accounts: AccountsService,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_DEFAULT_OWNER'>,
  ) {}

  /** 201 + Location + ETag; 409 when the id is taken. */
  @Post()
  async create(
    @Body() body: unknown,
    @Req() request: HttpRequest,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<Account> {
    const { account, version } = await this.accounts.create(body, this.ownerOf(request));
    response.status(201);
    response.setHeader('Location', `/accounts/${encodeURIComponent(account.accountId)}`);
    response.setHeader('ETag', etagOf(version));
    return account;
  }

  @Get()
  list(
    @Query() query: Record<string, unknown>,
    @Req() request: HttpRequest,
  ): Promise<AccountListPage> {
    return this.accounts.list(query, this.ownerOf(request));
  }

  @Get(':accountId')
  async get(
    @Param('accountId') accountId: string,
    @Req() request: HttpRequest,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<Account> {
    const { account, version } = await this.accounts.get(this.ownerOf(request), accountId);
    response.setHeader('ETag', etagOf(version));
    return account;
  }

  @Put(':accountId')
  async replace(
    @Param('accountId') accountId: string,
    @Body() body: unknown,
    @Req() request: HttpRequest,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<Account> {
    const { account, version } = await this.accounts.replace(
      this.ownerOf(request),
      accountId,
      body,
      parseIfMatch(headerValue(request, 'If-Match')),
    );
    response.setHeader('ETag', etagOf(version));
    return account;
  }

  @Delete(':accountId')
  @HttpCode(204)
  async delete(@Param('accountId') accountId: string, @Req() request: HttpRequest): Promise<void> {
    await this.accounts.delete(
      this.ownerOf(request),
      accountId,
      parseIfMatch(headerValue(request, 'If-Match')),
    );
  }

  private ownerOf(request: HttpRequest): string {
    return requestOwner(request, this.config.TDA_DEFAULT_OWNER);
  }
}
