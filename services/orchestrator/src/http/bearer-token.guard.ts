import { createHash, timingSafeEqual } from 'node:crypto';
import {
  Inject,
  Injectable,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { UnauthenticatedError } from '../orchestrator.errors';
import type { OrchestratorConfig } from '../config';
import { ADMIN_ID_TOKEN_VERIFIER, ORCHESTRATOR_CONFIG } from '../orchestrator.tokens';
import { headerValue, type HttpRequest } from './http-types';
import type { IdTokenVerifier } from '@tda/service-runtime';

const PUBLIC_ROUTE = 'tda:public-route';

/** Marks a handler (or controller) as reachable without the bearer token. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time string equality: hashing first makes both sides the same length. */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * `Authorization: Bearer <TDA_API_TOKEN>` on every HTTP route not marked @Public(). The token
 * is one operator credential (not per-user auth); see README "Auth". When TDA_ADMIN_OIDC_* is
 * configured, a Google-signed ID token of that one service account (Cloud Scheduler's identity,
 * which cannot carry our token: its OIDC token takes the Authorization header) is accepted too.
 * Message handlers (the step-event consumer) are not HTTP and pass through: Pub/Sub IAM guards
 * them.
 */
@Injectable()
export class BearerTokenGuard implements CanActivate {
  private readonly expected: string;
  private readonly oidc: IdTokenVerifier | undefined;

  constructor(
    private readonly reflector: Reflector,
    @Inject(ORCHESTRATOR_CONFIG) config: Pick<OrchestratorConfig, 'TDA_API_TOKEN'>,
    @Inject(ADMIN_ID_TOKEN_VERIFIER) oidc: IdTokenVerifier | null,
  ) {
    this.expected = config.TDA_API_TOKEN;
    this.oidc = oidc ?? undefined;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic === true) return true;
    const request = context.switchToHttp().getRequest<HttpRequest>();
    const header = headerValue(request, 'authorization');
    if (header === undefined) {
      throw new UnauthenticatedError('missing Authorization: Bearer <token> header');
    }
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    const token = match?.[1];
    if (token !== undefined && tokensEqual(token, this.expected)) return true;
    if (token !== undefined && this.oidc !== undefined) {
      // Only a refusal is an answer here; a verifier that cannot reach Google's keys throws and
      // the exception filter answers 500, so Cloud Scheduler retries instead of giving up.
      const check = await this.oidc.verify(header);
      if (check.ok) return true;
    }
    throw new UnauthenticatedError('invalid bearer token');
  }
}
