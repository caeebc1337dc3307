import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { GoogleIdTokenVerifier, type OidcSigningKeys } from '../id-token.verifier';

/** Claims of a Pub/Sub push token (what Google puts in it), all overridable. */
export type OidcTestClaims = Record<string, unknown>;

export interface OidcTestIssuerOptions {
  /** Key id in the JWT header and the key set. Default 'test-key-1'. */
  kid?: string;
  /** Defaults of every token. */
  audience?: string;
  serviceAccountEmail?: string;
  /** RS256 (Google ID tokens, the default) or ES256 (Identity-Aware Proxy's signed header). */
  algorithm?: 'RS256' | 'ES256';
}

function base64url(value: Buffer | string): string {
  return Buffer.from(value).toString('base64url');
}

/**
 * A stand-in for Google's token issuer in tests: a locally generated RSA key pair signs RS256
 * JWTs shaped like the OIDC tokens Pub/Sub attaches to push requests, and `keys()` is the key set
 * a GoogleIdTokenVerifier checks them against (instead of Google's certificates).
 */
export class OidcTestIssuer {
  readonly kid: string;
  readonly audience: string;
  readonly serviceAccountEmail: string;
  readonly algorithm: 'RS256' | 'ES256';
  private readonly privateKey: KeyObject;
  private readonly publicKeyPem: string;

  constructor(options: OidcTestIssuerOptions = {}) {
    this.kid = options.kid ?? 'test-key-1';
    this.audience = options.audience ?? 'tda-worker-test';
    this.serviceAccountEmail =
      options.serviceAccountEmail ?? 'tda-pubsub-push@tda-test.iam.gserviceaccount.com';
    this.algorithm = options.algorithm ?? 'RS256';
    const { privateKey, publicKey } =
      this.algorithm === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = privateKey;
    this.publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }

  keys(): OidcSigningKeys {
    return { [this.kid]: this.publicKeyPem };
  }

  /** A verifier for this issuer's keys (defaults: this issuer's audience and account). */
  verifier(options: { audience?: string; serviceAccountEmail?: string } = {}) {
    return new GoogleIdTokenVerifier({
      audience: options.audience ?? this.audience,
      serviceAccountEmail: options.serviceAccountEmail ?? this.serviceAccountEmail,
      keys: () => Promise.resolve(this.keys()),
    });
  }

  /**
   * A push token valid for one hour from now; `claims` override or (undefined) remove claims,
   * `header` overrides the JOSE header, `signWith` signs with another issuer's key.
   */
  token(
    claims: OidcTestClaims = {},
    options: { header?: Record<string, unknown>; signWith?: OidcTestIssuer } = {},
  ): string {
    const now = Math.floor(Date.now() / 1000);
    const payload: OidcTestClaims = {
      iss: 'https://accounts.google.com',
      aud: this.audience,
      azp: '100000000000000000000',
      sub: '100000000000000000000',
      email: this.serviceAccountEmail,
      email_verified: true,
      iat: now,
      exp: now + 3600,
      ...claims,
    };
    for (const [key, value] of Object.entries(payload)) {
      if (value === undefined) delete payload[key];
    }
    const header = { alg: this.algorithm, typ: 'JWT', kid: this.kid, ...options.header };
    const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
    const signer = createSign('RSA-SHA256');
    signer.update(signed);
    const key = (options.signWith ?? this).privateKey;
    // JWS carries an ECDSA signature as r || s (IEEE P1363), not DER.
    const signature =
      this.algorithm === 'ES256'
        ? signer.sign({ key, dsaEncoding: 'ieee-p1363' })
        : signer.sign(key);
    return `${signed}.${base64url(signature)}`;
  }

  /** `Bearer <token(...)>`. */
  authorization(claims: OidcTestClaims = {}): string {
    return `Bearer ${this.token(claims)}`;
  }
}
