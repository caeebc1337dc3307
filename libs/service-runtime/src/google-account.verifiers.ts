import { OAuth2Client, type Certificates } from 'google-auth-library';
import {
  bearerToken,
  GOOGLE_OIDC_ISSUERS,
  verifySignedJwt,
  type IdTokenCheck,
  type OidcSigningKeys,
} from './id-token.verifier';

/** The issuer of Identity-Aware Proxy's signed header (x-goog-iap-jwt-assertion). */
export const IAP_ISSUER = 'https://cloud.google.com/iap';
/** The header IAP adds to every request it lets through. */
export const IAP_ASSERTION_HEADER = 'x-goog-iap-jwt-assertion';
const KEY_CACHE_MS = 60 * 60 * 1000;

export interface GoogleAccountVerifierOptions {
  /** `aud` the token must carry (an OAuth client id; for IAP `/projects/<n>/…`). */
  audience: string;
  /** Signing keys; default Google's (OAuth2 certificates, or IAP's public keys). */
  keys?: () => Promise<OidcSigningKeys>;
  client?: OAuth2Client;
}

function emailOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.includes('@') && value.length <= 320
    ? value.toLowerCase()
    : undefined;
}

/**
 * A person's Google ID token (`Authorization: Bearer <id token>`, e.g. from `gcloud auth
 * print-identity-token`): signature against Google's keys, `iss`, `aud`, lifetime, then a
 * verified `email` — which the caller maps to an owner. Throws only when the keys cannot be
 * fetched (not the caller's fault).
 */
export class GoogleUserIdTokenVerifier {
  private readonly client: OAuth2Client;
  private readonly keys: () => Promise<Certificates>;

  constructor(private readonly options: GoogleAccountVerifierOptions) {
    this.client = options.client ?? new OAuth2Client();
    this.keys =
      options.keys ?? (async () => (await this.client.getFederatedSignonCertsAsync()).certs);
  }

  async verify(authorization: string | undefined): Promise<IdTokenCheck> {
    const bearer = bearerToken(authorization);
    if (!bearer.ok) return bearer;
    const keys = await this.keys();
    const verified = await verifySignedJwt(this.client, bearer.token, keys, this.options.audience, [
      ...GOOGLE_OIDC_ISSUERS,
    ]);
    if (!verified.ok) return verified;
    const email = emailOf(verified.payload.email);
    if (email === undefined) return { ok: false, reason: 'invalid_token' };
    if (verified.payload.email_verified !== true) {
      return { ok: false, reason: 'email_not_verified', email };
    }
    return { ok: true, email };
  }
}

/**
 * Identity-Aware Proxy's signed header: ES256 against IAP's public keys (cached one hour),
 * `iss` https://cloud.google.com/iap, `aud` the backend's audience, then its `email`. The bare
 * header is never trusted: anyone can send one to a service that is reachable without IAP.
 */
export class IapJwtVerifier {
  private readonly client: OAuth2Client;
  private readonly keys: () => Promise<Certificates>;
  private cached: { at: number; keys: Certificates } | undefined;

  constructor(private readonly options: GoogleAccountVerifierOptions) {
    this.client = options.client ?? new OAuth2Client();
    this.keys = options.keys ?? (() => this.iapKeys());
  }

  async verify(assertion: string | undefined): Promise<IdTokenCheck> {
    const parsed = bearerToken(assertion === undefined ? undefined : `Bearer ${assertion}`);
    if (!parsed.ok) return parsed;
    const keys = await this.keys();
    const verified = await verifySignedJwt(this.client, parsed.token, keys, this.options.audience, [
      IAP_ISSUER,
    ]);
    if (!verified.ok) return verified;
    const email = emailOf(verified.payload.email);
    return email === undefined ? { ok: false, reason: 'invalid_token' } : { ok: true, email };
  }

  private async iapKeys(): Promise<Certificates> {
    const now = Date.now();
    if (this.cached !== undefined && now - this.cached.at < KEY_CACHE_MS) return this.cached.keys;
    const { pubkeys } = await this.client.getIapPublicKeysAsync();
    this.cached = { at: now, keys: { ...pubkeys } };
    return this.cached.keys;
  }
}
