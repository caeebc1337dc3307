import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { InvalidRequestError } from '@tda/flow-engine';
import type { Principal } from '@tda/identity';
import { OWNER_ID_PATTERN } from '../config';
import { ForbiddenError, UnauthenticatedError } from '../orchestrator.errors';
import { headerValue, type HttpRequest } from '../http/http-types';
import { principalOf } from './request-principal';

/** The header an admin names another owner with (README "Identity and owners"). */
export const OWNER_HEADER = 'X-TDA-Owner';

/**
 * The owner a request acts for: the principal's own, or — for an admin only — the owner named in
 * X-TDA-Owner. One rule for every route that reads or writes owned data (runs, accounts,
 * reports, recommendations, streams). A user naming another owner is refused (403), never
 * silently served its own data.
 */
export function actingOwner(principal: Principal, request: Pick<HttpRequest, 'headers'>): string {
  const header = headerValue(request, OWNER_HEADER);
  if (header === undefined || header === principal.ownerId) return principal.ownerId;
  if (!OWNER_ID_PATTERN.test(header)) {
    throw new InvalidRequestError(`${OWNER_HEADER} is not a valid owner id`, {
      header: OWNER_HEADER,
      pattern: OWNER_ID_PATTERN.source,
    });
  }
  if (principal.role !== 'admin') {
    throw new ForbiddenError(`${OWNER_HEADER} (acting for another owner) needs the admin role`, {
      header: OWNER_HEADER,
    });
  }
  return header;
}

/** Handler parameter: the acting owner of this request (see actingOwner). */
export const Owner = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const request = context.switchToHttp().getRequest<HttpRequest>();
  const principal = principalOf(request);
  if (principal === undefined) throw new UnauthenticatedError('this route needs a credential');
  return actingOwner(principal, request);
});

/** Handler parameter: the authenticated principal. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => {
    const principal = principalOf(context.switchToHttp().getRequest<HttpRequest>());
    if (principal === undefined) throw new UnauthenticatedError('this route needs a credential');
    return principal;
  },
);
