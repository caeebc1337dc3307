import type { Provider } from '@nestjs/common';
import { InMemoryIdentityStore } from '@tda/identity';
import {
  GoogleIdTokenVerifier,
  GoogleUserIdTokenVerifier,
  IapJwtVerifier,
  type IdTokenVerifier,
} from '@tda/service-runtime';
import type { OrchestratorConfig } from '../config';
import type { OrchestratorModuleOptions } from '../orchestrator.options';
import { ADMIN_ID_TOKEN_VERIFIER } from '../orchestrator.tokens';
import { IAP_VERIFIER, IDENTITY_STORE, USER_ID_TOKEN_VERIFIER } from './auth.tokens';
import { IdentityAdmin } from './identity-admin.service';
import { PrincipalResolver } from './principal-resolver.service';

function adminOidcVerifierFor(config: OrchestratorConfig): IdTokenVerifier | null {
  const audience = config.TDA_ADMIN_OIDC_AUDIENCE;
  const serviceAccountEmail = config.TDA_ADMIN_OIDC_SERVICE_ACCOUNT;
  if (audience === undefined || serviceAccountEmail === undefined) return null;
  return new GoogleIdTokenVerifier({ audience, serviceAccountEmail });
}

/**
 * The identity part of the module: the store (default: in memory), the verifiers the config
 * enables (null = that credential kind is not accepted; tests pass verifiers over local keys),
 * the resolver and the admin use cases. Null, not undefined: Nest ignores `useValue: undefined`.
 */
export function authProviders(options: OrchestratorModuleOptions): Provider[] {
  const { config } = options;
  const userAudience = config.TDA_USER_OIDC_AUDIENCE;
  const iapAudience = config.TDA_IAP_AUDIENCE;
  return [
    { provide: IDENTITY_STORE, useValue: options.identities ?? new InMemoryIdentityStore() },
    {
      provide: ADMIN_ID_TOKEN_VERIFIER,
      useValue: options.adminOidcVerifier ?? adminOidcVerifierFor(config),
    },
    {
      provide: USER_ID_TOKEN_VERIFIER,
      useValue:
        options.userOidcVerifier ??
        (userAudience === undefined
          ? null
          : new GoogleUserIdTokenVerifier({ audience: userAudience })),
    },
    {
      provide: IAP_VERIFIER,
      useValue:
        options.iapVerifier ??
        (iapAudience === undefined ? null : new IapJwtVerifier({ audience: iapAudience })),
    },
    PrincipalResolver,
    IdentityAdmin,
  ];
}
