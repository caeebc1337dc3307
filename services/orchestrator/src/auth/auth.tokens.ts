/** IdentityStore (@tda/identity): API tokens and the Google account → owner mapping. */
export const IDENTITY_STORE = Symbol('tda.orchestrator.identityStore');
/** GoogleUserIdTokenVerifier for people's Google ID tokens, or null (TDA_USER_OIDC_AUDIENCE unset). */
export const USER_ID_TOKEN_VERIFIER = Symbol('tda.orchestrator.userIdTokenVerifier');
/** IapJwtVerifier for Identity-Aware Proxy's signed header, or null (TDA_IAP_AUDIENCE unset). */
export const IAP_VERIFIER = Symbol('tda.orchestrator.iapVerifier');
