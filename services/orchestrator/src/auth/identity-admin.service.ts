import { Inject, Injectable } from '@nestjs/common';
import {
  EMAIL_PATTERN,
  TdaError,
  validate,
  type ApiToken,
  type UserIdentity,
} from '@tda/contracts';
import { InvalidRequestError } from '@tda/flow-engine';
import { isTokenId, issueApiToken, type IdentityStore, type Principal } from '@tda/identity';
import { logEvent, type Logger } from '@tda/observability';
import { CLOCK, LOGGER, type Clock } from '../orchestrator.tokens';
import { IDENTITY_STORE } from './auth.tokens';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A token id or an email the store does not have. */
export class PrincipalNotFoundError extends TdaError {
  constructor(kind: 'token' | 'identity', id: string) {
    super('NOT_FOUND', `${kind} '${id}' does not exist`, { details: { [kind]: id } });
  }
}

/** POST /admin/tokens: the token is in this answer and nowhere else, ever. */
export interface CreatedApiToken extends ApiToken {
  token: string;
}

function checked<T>(
  result: { ok: true; value: T } | { ok: false; issues: unknown[] },
  what: string,
): T {
  if (!result.ok) throw new InvalidRequestError(`invalid ${what}`, { issues: result.issues });
  return result.value;
}

/** The admin use cases on principals: API tokens and Google account → owner mappings. */
@Injectable()
export class IdentityAdmin {
  constructor(
    @Inject(IDENTITY_STORE) private readonly store: IdentityStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async createToken(body: unknown, by: Principal): Promise<CreatedApiToken> {
    const request = checked(validate.apiTokenRequest(body), 'token request');
    const now = this.clock();
    const issued = issueApiToken();
    const record: ApiToken = {
      tokenId: issued.tokenId,
      ownerId: request.ownerId,
      role: request.role,
      name: request.name,
      createdAt: now.toISOString(),
      createdBy: by.subject,
      ...(request.expiresInDays === undefined
        ? {}
        : { expiresAt: new Date(now.getTime() + request.expiresInDays * DAY_MS).toISOString() }),
    };
    await this.store.createToken(issued.hash, record);
    logEvent(this.logger, 'info', 'api_token_created', {
      who: by.subject,
      tokenId: record.tokenId,
      ownerId: record.ownerId,
      role: record.role,
    });
    return { ...record, token: issued.token };
  }

  async listTokens(rawOwner: unknown): Promise<{ tokens: ApiToken[] }> {
    if (rawOwner !== undefined && (typeof rawOwner !== 'string' || rawOwner === '')) {
      throw new InvalidRequestError('ownerId must be given once, as a string', {
        parameter: 'ownerId',
      });
    }
    const tokens = await this.store.listTokens(rawOwner === undefined ? {} : { ownerId: rawOwner });
    return { tokens };
  }

  async revokeToken(tokenId: string, by: Principal): Promise<ApiToken> {
    if (!isTokenId(tokenId)) throw new PrincipalNotFoundError('token', tokenId.slice(0, 40));
    const revoked = await this.store.revokeToken(tokenId, this.clock().toISOString());
    if (revoked === null) throw new PrincipalNotFoundError('token', tokenId);
    logEvent(this.logger, 'info', 'api_token_revoked', { who: by.subject, tokenId });
    return revoked;
  }

  async putIdentity(rawEmail: string, body: unknown, by: Principal): Promise<UserIdentity> {
    const email = rawEmail.toLowerCase();
    if (!EMAIL_PATTERN.test(email) || email.length > 320) {
      throw new InvalidRequestError('not an email address', { parameter: 'email' });
    }
    const request = checked(validate.userIdentityRequest(body), 'identity request');
    const identity: UserIdentity = {
      email,
      ownerId: request.ownerId,
      role: request.role,
      createdAt: this.clock().toISOString(),
      createdBy: by.subject,
    };
    await this.store.putUserIdentity(identity);
    logEvent(this.logger, 'info', 'user_identity_changed', {
      who: by.subject,
      email,
      ownerId: identity.ownerId,
      role: identity.role,
      change: 'put',
    });
    return identity;
  }

  async listIdentities(): Promise<{ identities: UserIdentity[] }> {
    return { identities: await this.store.listUserIdentities() };
  }

  async deleteIdentity(rawEmail: string, by: Principal): Promise<void> {
    const email = rawEmail.toLowerCase();
    if (!(await this.store.deleteUserIdentity(email))) {
      throw new PrincipalNotFoundError('identity', email.slice(0, 320));
    }
    logEvent(this.logger, 'info', 'user_identity_changed', {
      who: by.subject,
      email,
      change: 'delete',
    });
  }
}
