import { OAuth2Client } from 'google-auth-library';
import { describe, expect, it, vi } from 'vitest';
import { bearerToken, GoogleIdTokenVerifier } from './id-token.verifier';
import { OidcTestIssuer } from './testing';

const issuer = new OidcTestIssuer({
  audience: 'tda-worker-ohlcv-export',
  serviceAccountEmail: 'tda-pubsub-push@acme.iam.gserviceaccount.com',
});
const stranger = new OidcTestIssuer({ audience: issuer.audience });
const verifier = issuer.verifier();
const now = (): number => Math.floor(Date.now() / 1000);
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('bearerToken', () => {
  it.each([
    [undefined, 'missing_token'],
    ['', 'missing_token'],
    ['   ', 'missing_token'],
    ['Basic dXNlcjpwYXNz', 'malformed_token'],
    ['Bearer', 'malformed_token'],
    ['Bearer a.b', 'malformed_token'],
    ['Bearer a.b.c.d', 'malformed_token'],
    ['Bearer a.b.c extra', 'malformed_token'],
    ['Bearer a+b.c/d.e=', 'malformed_token'],
    [`Bearer ${'a'.repeat(8190)}.b.c`, 'malformed_token'],
  ])('%j → %s', (header, reason) => {
    expect(bearerToken(header)).toEqual({ ok: false, reason });
  });

  it('takes the token of a Bearer header (scheme case-insensitive)', () => {
    expect(bearerToken('bearer aa.bb.cc')).toEqual({ ok: true, token: 'aa.bb.cc' });
    expect(bearerToken('Bearer  aa.bb.cc ')).toEqual({ ok: true, token: 'aa.bb.cc' });
  });
});

describe('GoogleIdTokenVerifier', () => {
  it('accepts a push token of the configured service account for the configured audience', async () => {
    await expect(verifier.verify(issuer.authorization())).resolves.toEqual({
      ok: true,
      email: 'tda-pubsub-push@acme.iam.gserviceaccount.com',
    });
  });

  it('accepts both Google issuer spellings and an email in other case', async () => {
    await expect(
      verifier.verify(issuer.authorization({ iss: 'accounts.google.com' })),
    ).resolves.toMatchObject({ ok: true });
    await expect(
      verifier.verify(
        issuer.authorization({ email: 'TDA-PUBSUB-PUSH@acme.iam.gserviceaccount.com' }),
      ),
    ).resolves.toMatchObject({ ok: true });
  });

  const unsigned = `${b64({ alg: 'RS256', kid: issuer.kid })}.${b64({ aud: issuer.audience })}`;
  it.each<[string, () => string | undefined, string]>([
    ['no Authorization header', () => undefined, 'missing_token'],
    ['a non-Bearer scheme', () => 'Basic dXNlcjpwYXNz', 'malformed_token'],
    ['two segments', () => `Bearer ${unsigned}`, 'malformed_token'],
    ['a header that is not JSON', () => 'Bearer bm90IGpzb24.e30.c2ln', 'malformed_token'],
    [
      'a key id Google does not have',
      () => `Bearer ${issuer.token({}, { header: { kid: 'other' } })}`,
      'unknown_key',
    ],
    [
      'a signature by another key',
      () => `Bearer ${issuer.token({}, { signWith: stranger })}`,
      'bad_signature',
    ],
    [
      'a tampered payload',
      () => {
        const [header, , signature] = issuer.token().split('.');
        return `Bearer ${header}.${b64({ aud: issuer.audience, email: issuer.serviceAccountEmail, iat: now(), exp: now() + 60 })}.${signature}`;
      },
      'bad_signature',
    ],
    [
      'alg none without a signature',
      () => `Bearer ${b64({ alg: 'none', kid: issuer.kid })}.${b64({ aud: issuer.audience })}.AA`,
      'bad_signature',
    ],
    [
      'an expired token (beyond the 5 min skew)',
      () => issuer.authorization({ iat: now() - 4000, exp: now() - 400 }),
      'expired',
    ],
    [
      'a token issued in the future',
      () => issuer.authorization({ iat: now() + 900, exp: now() + 4000 }),
      'not_yet_valid',
    ],
    [
      'a lifetime over 24 h',
      () => issuer.authorization({ exp: now() + 90_000 }),
      'lifetime_too_long',
    ],
    ['no exp', () => issuer.authorization({ exp: undefined }), 'malformed_token'],
    ['no iat', () => issuer.authorization({ iat: undefined }), 'malformed_token'],
    [
      'another issuer',
      () => issuer.authorization({ iss: 'https://evil.example.com' }),
      'wrong_issuer',
    ],
    [
      'another audience',
      () => issuer.authorization({ aud: 'tda-worker-chart-export' }),
      'wrong_audience',
    ],
    ['an audience list', () => issuer.authorization({ aud: [issuer.audience] }), 'wrong_audience'],
    [
      'another service account',
      () => issuer.authorization({ email: 'someone@acme.iam.gserviceaccount.com' }),
      'wrong_service_account',
    ],
    ['no email', () => issuer.authorization({ email: undefined }), 'wrong_service_account'],
    [
      'email_verified false',
      () => issuer.authorization({ email_verified: false }),
      'email_not_verified',
    ],
    [
      'email_verified as a string',
      () => issuer.authorization({ email_verified: 'true' }),
      'email_not_verified',
    ],
    [
      'no email_verified',
      () => issuer.authorization({ email_verified: undefined }),
      'email_not_verified',
    ],
  ])('refuses %s', async (_name, header, reason) => {
    const check = await verifier.verify(header());
    expect(check).toMatchObject({ ok: false, reason });
  });

  it('names who tried only once the signature, issuer and audience are verified', async () => {
    await expect(
      verifier.verify(issuer.authorization({ email: 'someone@acme.iam.gserviceaccount.com' })),
    ).resolves.toEqual({
      ok: false,
      reason: 'wrong_service_account',
      email: 'someone@acme.iam.gserviceaccount.com',
    });
    const forged = await verifier.verify(`Bearer ${issuer.token({}, { signWith: stranger })}`);
    expect(forged).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a token for another audience even with the right account', async () => {
    const other = issuer.verifier({ audience: 'tda-worker-chart-export' });
    await expect(other.verify(issuer.authorization())).resolves.toMatchObject({
      reason: 'wrong_audience',
    });
  });

  it('throws (retry later) when the signing keys cannot be fetched, without reading the token', async () => {
    const unreachable = new GoogleIdTokenVerifier({
      audience: issuer.audience,
      serviceAccountEmail: issuer.serviceAccountEmail,
      keys: () => Promise.reject(new Error('Failed to retrieve verification certificates')),
    });
    await expect(unreachable.verify(issuer.authorization())).rejects.toThrow(
      'Failed to retrieve verification certificates',
    );
    // A request without a token is refused before any key is needed.
    await expect(unreachable.verify(undefined)).resolves.toEqual({
      ok: false,
      reason: 'missing_token',
    });
  });

  it("by default takes the keys from google-auth-library's Google certificate fetch", async () => {
    const client = new OAuth2Client();
    type CertsResponse = Awaited<ReturnType<OAuth2Client['getFederatedSignonCertsAsync']>>;
    // No network in tests: the fetch (cached by the library per Cache-Control) is stubbed.
    const fetchCerts = vi
      .spyOn(client, 'getFederatedSignonCertsAsync')
      .mockImplementation(() =>
        Promise.resolve({ certs: issuer.keys(), format: 'PEM' } as unknown as CertsResponse),
      );
    const google = new GoogleIdTokenVerifier({
      audience: issuer.audience,
      serviceAccountEmail: issuer.serviceAccountEmail,
      client,
    });
    await expect(google.verify(issuer.authorization())).resolves.toMatchObject({ ok: true });
    await expect(google.verify(stranger.authorization())).resolves.toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(fetchCerts).toHaveBeenCalledTimes(2);
  });
});
