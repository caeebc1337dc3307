import { ROLES, type Role } from '@tda/contracts';

export { ROLES, type Role } from '@tda/contracts';

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** How the caller proved who it is (README "Identity and owners"). */
export type AuthMethod = 'api_token' | 'operator_token' | 'google_id_token' | 'iap';

/**
 * The authenticated caller of one request. `subject` names the credential for audit logs
 * (`tok_…`, `google:<email>`, `iap:<email>`, `operator`) and is never the secret itself.
 */
export interface Principal {
  ownerId: string;
  role: Role;
  method: AuthMethod;
  subject: string;
}
