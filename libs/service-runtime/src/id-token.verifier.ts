import { OAuth2Client, type Certificates, type TokenPayload } from 'google-auth-library';

/** The issuers of Google-signed ID tokens (Pub/Sub push tokens use the https form). */
export const GOOGLE_OIDC_ISSUERS: readonly string[] = [
  'https://accounts.google.com',
  'accounts.google.com',
];

/** Why a push request's token was refused (logged; the token itself never is). */
export type IdTokenRejection =
  | 'missing_token'
  | 'malformed_token'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'lifetime_too_long'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'wrong_service_account'
  | 'email_not_verified'
  | 'invalid_token';

export type IdTokenCheck =
  | { ok: true; email: string }
  /** `email` only once the signature, issuer and audience were verified (who tried). */
  | { ok: false; reason: IdTokenRejection; email?: string };

/**
 * The port the push route authenticates with. verify() settles every token (a refusal is a
 * result, not an error); it throws only when it cannot decide now (Google's keys unreachable),
 * which the route answers with 500 so Pub/Sub retries.
 */
export interface IdTokenVerifier {
  verify(authorization: string | undefined): Promise<IdTokenCheck>;
}

/** Key id → PEM public key or certificate (Google's https://www.googleapis.com/oauth2/v1/certs). */
export type OidcSigningKeys = Readonly<Record<string, string>>;

export interface GoogleIdTokenVerifierOptions {
  /** The push subscription's OIDC audience (TDA_PUSH_AUDIENCE); `aud` must equal it. */
  audience: string;
  /** The push identity (TDA_PUSH_SERVICE_ACCOUNT); `email` must equal it, `email_verified` true. */
  serviceAccountEmail: string;
  /**
   * The signing keys. Default: Google's OAuth2 certificates through google-auth-library, fetched
   * on first use and cached for their Cache-Control max-age (key rotation is picked up then).
   * Tests pass the public key of a locally generated RSA key pair.
   */
  keys?: () => Promise<OidcSigningKeys>;
  client?: OAuth2Client;
}

/** JWS compact serialisation (base64url parts); Google ID tokens are ~1 KiB. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_TOKEN_LENGTH = 8192;

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(
  authorization: string | undefined,
): { ok: true; token: string } | { ok: false; reason: 'missing_token' | 'malformed_token' } {
  if (authorization === undefined || authorization.trim() === '') {
    return { ok: false, reason: 'missing_token' };
  }
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization);
  const token = match?.[1];
  if (token === undefined || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) {
    return { ok: false, reason: 'malformed_token' };
  }
  return { ok: true, token };
}

/**
 * google-auth-library reports refusals as plain Errors whose messages embed the token or its
 * payload: map them to a reason by their fixed prefix and drop the message.
 */
const LIBRARY_REFUSALS: readonly [RegExp, IdTokenRejection][] = [
  [/^Wrong number of segments/, 'malformed_token'],
  [/^Can't parse token/, 'malformed_token'],
  [/^No issue time in token|^No expiration time in token|^iat field|^exp field/, 'malformed_token'],
  [/^No pem found/, 'unknown_key'],
  [/^Invalid token signature/, 'bad_signature'],
  [/^Token used too late/, 'expired'],
  [/^Token used too early/, 'not_yet_valid'],
  [/^Expiration time too far in future/, 'lifetime_too_long'],
  [/^Invalid issuer/, 'wrong_issuer'],
  [/^Wrong recipient/, 'wrong_audience'],
];

function refusalOf(error: unknown): IdTokenRejection {
  const message = error instanceof Error ? error.message : '';
  return LIBRARY_REFUSALS.find(([pattern]) => pattern.test(message))?.[1] ?? 'invalid_token';
}

/**
 * Signature (by `kid`, RS256 or ES256), `iss` in `issuers`, `aud`, `iat`/`exp` (5 min skew, at
 * most 24 h lifetime) of a compact JWS; a refusal is a reason, never the library's message.
 */
export async function verifySignedJwt(
  client: OAuth2Client,
  token: string,
  keys: Certificates,
  audience: string,
  issuers: string[],
): Promise<{ ok: true; payload: TokenPayload } | { ok: false; reason: IdTokenRejection }> {
  try {
    const ticket = await client.verifySignedJwtWithCertsAsync(
      token,
      { ...keys },
      audience,
      issuers,
    );
    const payload = ticket.getPayload();
    return payload === undefined ? { ok: false, reason: 'malformed_token' } : { ok: true, payload };
  } catch (error) {
    return { ok: false, reason: refusalOf(error) };
  }
}

/**
 * Verifies the OIDC ID token Pub/Sub attaches to push requests (DESIGN: defence in depth behind
 * Cloud Run's IAM invoker check): RS256 signature against Google's keys (by `kid`), `iss` one of
 * GOOGLE_OIDC_ISSUERS, `aud` = the configured audience, `iat`/`exp` valid (google-auth-library
 * allows 5 min of clock skew and at most 24 h of lifetime), then `email` = the push service
 * account and `email_verified` = true.
 */
export class GoogleIdTokenVerifier implements IdTokenVerifier {
  private readonly client: OAuth2Client;
  private readonly keys: () => Promise<Certificates>;
  private readonly audience: string;
  private readonly serviceAccountEmail: string;

  constructor(options: GoogleIdTokenVerifierOptions) {
    this.client = options.client ?? new OAuth2Client();
    this.audience = options.audience;
    this.serviceAccountEmail = options.serviceAccountEmail.toLowerCase();
    this.keys =
      options.keys ?? (async () => (await this.client.getFederatedSignonCertsAsync()).certs);
  }

  async verify(authorization: string | undefined): Promise<IdTokenCheck> {
    const bearer = bearerToken(authorization);
    if (!bearer.ok) return bearer;
    // Outside the try: unreachable keys are not the caller's fault (thrown → 500, retried).
    const keys = await this.keys();
    const verified = await verifySignedJwt(this.client, bearer.token, keys, this.audience, [
      ...GOOGLE_OIDC_ISSUERS,
    ]);
    if (!verified.ok) return verified;
    const payload = verified.payload;
    const email = typeof payload.email === 'string' ? payload.email.toLowerCase() : undefined;
    if (email !== this.serviceAccountEmail) {
      return {
        ok: false,
        reason: 'wrong_service_account',
        ...(email === undefined ? {} : { email: email.slice(0, 256) }),
      };
    }
    // Google sends a boolean; anything else is not a verified email.
    if (payload.email_verified !== true) {
      return { ok: false, reason: 'email_not_verified', email };
    }
    return { ok: true, email };
  }
}
