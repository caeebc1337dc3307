import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
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
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import { headerValue, type HttpRequest, type HttpResponse } from './http-types';

/**
 * Accounts (README "Accounts"): the request owner's paper accounts, and documents standing for
 * the live exchange account. Reads answer the version as `ETag`; PUT and DELETE honour
 * `If-Match` (409 when the account changed since). Another owner's account is a 404.
 */
@Controller('accounts')
@Access('user')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  /** 201 + Location + ETag; 409 when the id is taken. */
  @Post()
  async create(
    @Body() body: unknown,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<Account> {
    const { account, version } = await this.accounts.create(body, owner);
    response.status(201);
    response.setHeader('Location', `/accounts/${encodeURIComponent(account.accountId)}`);
    response.setHeader('ETag', etagOf(version));
    return account;
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Owner() owner: string): Promise<AccountListPage> {
    return this.accounts.list(query, owner);
  }

  @Get(':accountId')
  async get(
    @Param('accountId') accountId: string,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<Account> {
    const { account, version } = await this.accounts.get(owner, accountId);
    response.setHeader('ETag', etagOf(version));
    return account;
  }

  @Put(':accountId')
  async replace(
    @Param('accountId') accountId: string,
    @Body() body: unknown,
    @Owner() owner: string,
    @Req() request: HttpRequest,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<Account> {
    const { account, version } = await this.accounts.replace(
      owner,
      accountId,
      body,
      parseIfMatch(headerValue(request, 'If-Match')),
    );
    response.setHeader('ETag', etagOf(version));
    return account;
  }

  @Delete(':accountId')
  @HttpCode(204)
  async delete(
    @Param('accountId') accountId: string,
    @Owner() owner: string,
    @Req() request: HttpRequest,
  ): Promise<void> {
    await this.accounts.delete(owner, accountId, parseIfMatch(headerValue(request, 'If-Match')));
  }
}
