import { describe, expect, it } from 'vitest';
import { GoogleUserIdTokenVerifier, IAP_ISSUER, IapJwtVerifier } from './google-account.verifiers';
import { OidcTestIssuer } from './testing/oidc-test.issuer';

const USER_AUDIENCE = '1234-console.apps.googleusercontent.com';
const IAP_AUDIENCE = '/projects/123/locations/europe-west1/services/tda-orchestrator';

describe('GoogleUserIdTokenVerifier', () => {
  const issuer = new OidcTestIssuer({ audience: USER_AUDIENCE });
  const verifier = new GoogleUserIdTokenVerifier({
    audience: USER_AUDIENCE,
    keys: () => Promise.resolve(issuer.keys()),
  });

  it('accepts a Google-signed token with a verified email (lower-cased)', async () => {
    const check = await verifier.verify(issuer.authorization({ email: 'Alice@Example.com' }));
    expect(check).toEqual({ ok: true, email: 'alice@example.com' });
  });

  it.each([
    ['another audience', { aud: 'someone-else' }, 'wrong_audience'],
    ['an unverified email', { email_verified: false }, 'email_not_verified'],
    ['no email', { email: undefined }, 'invalid_token'],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 3600 }, 'expired'],
  ])('refuses %s', async (_name, claims, reason) => {
    const check = await verifier.verify(issuer.authorization(claims));
    expect(check).toMatchObject({ ok: false, reason });
  });

  it('refuses a token signed by another key', async () => {
    const token = issuer.token({}, { signWith: new OidcTestIssuer({ audience: USER_AUDIENCE }) });
    expect(await verifier.verify(`Bearer ${token}`)).toMatchObject({ ok: false });
  });
});

describe('IapJwtVerifier', () => {
  const iap = new OidcTestIssuer({ audience: IAP_AUDIENCE, algorithm: 'ES256', kid: 'iap-1' });
  const verifier = new IapJwtVerifier({
    audience: IAP_AUDIENCE,
    keys: () => Promise.resolve(iap.keys()),
  });
  const assertion = (claims: Record<string, unknown> = {}) =>
    iap.token({ iss: IAP_ISSUER, email: 'bob@example.com', email_verified: undefined, ...claims });

  it('accepts an ES256 assertion of IAP for this backend', async () => {
    expect(await verifier.verify(assertion())).toEqual({ ok: true, email: 'bob@example.com' });
  });

  it('never trusts a bare or forged header', async () => {
    expect(await verifier.verify(undefined)).toMatchObject({ ok: false, reason: 'missing_token' });
    expect(await verifier.verify('bob@example.com')).toMatchObject({
      ok: false,
      reason: 'malformed_token',
    });
    const forged = iap.token(
      { iss: IAP_ISSUER, email: 'bob@example.com' },
      { signWith: new OidcTestIssuer({ algorithm: 'ES256', kid: 'iap-1' }) },
    );
    expect(await verifier.verify(forged)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a Google ID token (wrong issuer) and another backend (wrong audience)', async () => {
    expect(await verifier.verify(assertion({ iss: 'https://accounts.google.com' }))).toMatchObject({
      ok: false,
      reason: 'wrong_issuer',
    });
    expect(await verifier.verify(assertion({ aud: '/projects/123/other' }))).toMatchObject({
      ok: false,
      reason: 'wrong_audience',
    });
  });
});
