import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import type { ApiToken, UserIdentity } from '@tda/contracts';
import type { Principal } from '@tda/identity';
import { Access } from './access.decorator';
import { CurrentPrincipal } from './acting-owner';
import { IdentityAdmin, type CreatedApiToken } from './identity-admin.service';

/** Who am I: the console's sign-in check (also behind IAP, where the browser sends no token). */
@Controller('me')
export class MeController {
  @Get()
  @Access('user')
  me(@CurrentPrincipal() principal: Principal): Principal {
    return principal;
  }
}

/** API tokens and Google account mappings (admin; README "Identity and owners"). */
@Controller('admin')
@Access('admin')
export class IdentityAdminController {
  constructor(private readonly admin: IdentityAdmin) {}

  /** 201 with the token (shown once) and its record. */
  @Post('tokens')
  createToken(
    @Body() body: unknown,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CreatedApiToken> {
    return this.admin.createToken(body, principal);
  }

  @Get('tokens')
  listTokens(@Query('ownerId') ownerId: unknown): Promise<{ tokens: ApiToken[] }> {
    return this.admin.listTokens(ownerId);
  }

  /** 200 with the revoked record (a second revoke keeps the first time). */
  @Delete('tokens/:tokenId')
  revokeToken(
    @Param('tokenId') tokenId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ApiToken> {
    return this.admin.revokeToken(tokenId, principal);
  }

  @Get('identities')
  listIdentities(): Promise<{ identities: UserIdentity[] }> {
    return this.admin.listIdentities();
  }

  @Put('identities/:email')
  putIdentity(
    @Param('email') email: string,
    @Body() body: unknown,
    @CurrentPrincipal() principal: Principal,
  ): Promise<UserIdentity> {
    return this.admin.putIdentity(email, body, principal);
  }

  @Delete('identities/:email')
  @HttpCode(204)
  deleteIdentity(
    @Param('email') email: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<void> {
    return this.admin.deleteIdentity(email, principal);
  }
}
