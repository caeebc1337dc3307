import { Inject, Injectable } from '@nestjs/common';
import {
  hashApiToken,
  isApiTokenFormat,
  type ApiTokenRecord,
  type IdentityStore,
  type Principal,
} from '@tda/identity';
import { logEvent, type Logger } from '@tda/observability';
import {
  IAP_ASSERTION_HEADER,
  type GoogleUserIdTokenVerifier,
  type IapJwtVerifier,
  type IdTokenVerifier,
} from '@tda/service-runtime';
import type { OrchestratorConfig } from '../config';
import { UnauthenticatedError } from '../orchestrator.errors';
import {
  ADMIN_ID_TOKEN_VERIFIER,
  CLOCK,
  LOGGER,
  ORCHESTRATOR_CONFIG,
  type Clock,
} from '../orchestrator.tokens';
import { headerValue, type HttpRequest } from '../http/http-types';
import { tokensEqual } from './tokens-equal';
import { IAP_VERIFIER, IDENTITY_STORE, USER_ID_TOKEN_VERIFIER } from './auth.tokens';

/** lastUsedAt is written at most this often per token (not a write per request). */
const TOUCH_EVERY_MS = 5 * 60 * 1000;

type Verifier = Pick<IdTokenVerifier, 'verify'>;

/**
 * Who is calling (README "Identity and owners"), in this order: Identity-Aware Proxy's signed
 * header when IAP is configured (verified, never trusted bare), else the bearer credential — an
 * API token (hashed, one store get), the operator token, a Google ID token of the admin service
 * account or of a person mapped to an owner. Every refusal is UNAUTHENTICATED with a reason;
 * no message ever contains the presented credential.
 */
@Injectable()
export class PrincipalResolver {
  constructor(
    @Inject(IDENTITY_STORE) private readonly identities: IdentityStore,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_API_TOKEN' | 'TDA_DEFAULT_OWNER'>,
    @Inject(ADMIN_ID_TOKEN_VERIFIER) private readonly adminOidc: Verifier | null,
    @Inject(USER_ID_TOKEN_VERIFIER)
    private readonly userOidc: Pick<GoogleUserIdTokenVerifier, 'verify'> | null,
    @Inject(IAP_VERIFIER) private readonly iap: Pick<IapJwtVerifier, 'verify'> | null,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async resolve(request: HttpRequest): Promise<Principal> {
    const assertion = headerValue(request, IAP_ASSERTION_HEADER);
    if (this.iap !== null && assertion !== undefined) return this.viaIap(assertion);
    const header = headerValue(request, 'authorization');
    if (header === undefined) {
      throw new UnauthenticatedError('missing Authorization: Bearer <token> header', {
        reason: 'missing_token',
      });
    }
    const token = /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1];
    if (token === undefined) {
      throw new UnauthenticatedError('Authorization must be "Bearer <token>"', {
        reason: 'malformed_token',
      });
    }
    if (isApiTokenFormat(token)) return this.viaApiToken(token);
    if (tokensEqual(token, this.config.TDA_API_TOKEN)) {
      return {
        ownerId: this.config.TDA_DEFAULT_OWNER,
        role: 'admin',
        method: 'operator_token',
        subject: 'operator',
      };
    }
    return this.viaGoogleIdToken(header);
  }

  private async viaApiToken(token: string): Promise<Principal> {
    const hash = hashApiToken(token);
    const record = await this.identities.findTokenByHash(hash);
    const refusal = record === null ? 'unknown_token' : this.refusalOf(record);
    if (record === null || refusal !== undefined) {
      throw new UnauthenticatedError(`invalid API token (${refusal ?? 'unknown_token'})`, {
        reason: refusal ?? 'unknown_token',
        ...(record === null ? {} : { tokenId: record.tokenId }),
      });
    }
    this.touch(hash, record);
    return {
      ownerId: record.ownerId,
      role: record.role,
      method: 'api_token',
      subject: record.tokenId,
    };
  }

  private refusalOf(record: ApiTokenRecord): 'revoked' | 'expired' | undefined {
    if (record.revokedAt !== undefined) return 'revoked';
    if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= this.clock().getTime()) {
      return 'expired';
    }
    return undefined;
  }

  /** Fire and forget: a failed lastUsedAt write must not fail the request it describes. */
  private touch(hash: string, record: ApiTokenRecord): void {
    const now = this.clock();
    const last = record.lastUsedAt === undefined ? 0 : Date.parse(record.lastUsedAt);
    if (now.getTime() - last < TOUCH_EVERY_MS) return;
    this.identities.touchToken(hash, now.toISOString()).catch((error: unknown) => {
      logEvent(this.logger, 'warn', 'api_token_touch_failed', {
        tokenId: record.tokenId,
        error: error instanceof Error ? error.name : 'unknown',
      });
    });
  }

  private async viaGoogleIdToken(header: string): Promise<Principal> {
    // Only a refusal is an answer; a verifier that cannot reach Google's keys throws (→ 500).
    if (this.adminOidc !== null) {
      const check = await this.adminOidc.verify(header);
      if (check.ok) {
        return {
          ownerId: this.config.TDA_DEFAULT_OWNER,
          role: 'admin',
          method: 'google_id_token',
          subject: `google:${check.email}`,
        };
      }
    }
    if (this.userOidc !== null) {
      const check = await this.userOidc.verify(header);
      if (check.ok) return this.mapped(check.email, 'google_id_token', 'google');
    }
    throw new UnauthenticatedError('invalid bearer token', { reason: 'invalid_token' });
  }

  private async viaIap(assertion: string): Promise<Principal> {
    const check = await this.iap?.verify(assertion);
    if (check === undefined || !check.ok) {
      throw new UnauthenticatedError('invalid Identity-Aware Proxy assertion', {
        reason: check?.reason ?? 'invalid_token',
      });
    }
    return this.mapped(check.email, 'iap', 'iap');
  }

  private async mapped(
    email: string,
    method: Principal['method'],
    prefix: string,
  ): Promise<Principal> {
    const identity = await this.identities.getUserIdentity(email);
    if (identity === null) {
      throw new UnauthenticatedError(
        `the Google account ${email} has no TDA identity (an admin maps it: tda identities add)`,
        { reason: 'unmapped_account', email },
      );
    }
    return {
      ownerId: identity.ownerId,
      role: identity.role,
      method,
      subject: `${prefix}:${email}`,
    };
  }
}
