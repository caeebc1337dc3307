import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Principal } from '@tda/identity';
import { logEvent, type Logger } from '@tda/observability';
import { isTdaError } from '@tda/contracts';
import { ForbiddenError } from '../orchestrator.errors';
import { LOGGER } from '../orchestrator.tokens';
import { headerValue, type HttpRequest, type HttpResponse } from '../http/http-types';
import { ACCESS_METADATA, type AccessLevel } from './access.decorator';
import { OWNER_HEADER } from './acting-owner';
import { PrincipalResolver } from './principal-resolver.service';
import { attachPrincipal } from './request-principal';

type RoutedRequest = HttpRequest & { route?: { path?: unknown }; params?: Record<string, unknown> };

/**
 * Every HTTP route's authorization decision (@Access): public passes, anything else needs a
 * principal, admin routes the admin role. Admin routes and every write leave an `audit_action`
 * line (who, what, which run, outcome) when the response is sent. Message handlers (the
 * step-event consumer) are not HTTP and pass through: Pub/Sub IAM guards them.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly principals: PrincipalResolver,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const access = this.reflector.getAllAndOverride<AccessLevel | undefined>(ACCESS_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    // The boot check makes this unreachable; refusing is the safe answer if it ever is not.
    if (access === undefined) throw new ForbiddenError('this route has no authorization decision');
    if (access === 'public') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<RoutedRequest>();
    const principal = await this.authenticate(request);
    attachPrincipal(request, principal);
    if (access === 'admin' || !['GET', 'HEAD'].includes(request.method)) {
      this.auditOnFinish(request, http.getResponse<HttpResponse>(), principal, access);
    }
    if (access === 'admin' && principal.role !== 'admin') {
      throw new ForbiddenError('this route needs the admin role', { role: principal.role });
    }
    return true;
  }

  private async authenticate(request: RoutedRequest): Promise<Principal> {
    try {
      return await this.principals.resolve(request);
    } catch (error) {
      if (isTdaError(error) && error.code === 'UNAUTHENTICATED') {
        logEvent(this.logger, 'warn', 'auth_rejected', {
          reason: error.details['reason'] ?? 'invalid_token',
          httpMethod: request.method,
          path: request.path,
          ...(typeof error.details['tokenId'] === 'string'
            ? { tokenId: error.details['tokenId'] }
            : {}),
        });
      }
      throw error;
    }
  }

  private auditOnFinish(
    request: RoutedRequest,
    response: HttpResponse,
    principal: Principal,
    access: AccessLevel,
  ): void {
    response.on('finish', () => {
      const runId = request.params?.['runId'];
      const actingFor = headerValue(request, OWNER_HEADER);
      logEvent(this.logger, 'info', 'audit_action', {
        who: principal.subject,
        ownerId: principal.ownerId,
        role: principal.role,
        authMethod: principal.method,
        what: `${request.method} ${typeof request.route?.path === 'string' ? request.route.path : request.path}`,
        access,
        status: response.statusCode,
        ...(typeof runId === 'string' ? { runId } : {}),
        ...(actingFor === undefined ? {} : { actingFor }),
      });
    });
  }
}
