import { apiErrorFrom } from '../api/api-error';
import type { Principal } from '../api/api-types';
import { createApiClient } from '../api/client';

export type PrincipalCheck =
  { kind: 'signed-in'; principal: Principal } | { kind: 'unauthenticated' };

/**
 * Who `token` is, by GET /me (null: no token — behind IAP the proxy authenticates the browser).
 * 401 is "not signed in"; any other failure is thrown (the orchestrator is down, ...).
 */
export async function checkPrincipal(token: string | null): Promise<PrincipalCheck> {
  const client = createApiClient({ token: () => token });
  const me = await client.GET('/me');
  if (me.response.ok && me.data !== undefined) return { kind: 'signed-in', principal: me.data };
  if (me.response.status === 401) return { kind: 'unauthenticated' };
  throw apiErrorFrom(me.response.status, me.error);
}
