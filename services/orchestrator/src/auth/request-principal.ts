import type { Principal } from '@tda/identity';
import type { HttpRequest } from '../http/http-types';

const principals = new WeakMap<object, Principal>();

/** Set by AuthGuard once the caller is authenticated. */
export function attachPrincipal(request: HttpRequest, principal: Principal): void {
  principals.set(request, principal);
}

/** The caller of a non-public route. Absent only on public routes (a wiring bug elsewhere). */
export function principalOf(request: HttpRequest): Principal | undefined {
  return principals.get(request);
}
