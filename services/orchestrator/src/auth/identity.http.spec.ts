import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import type { ApiToken, FlowRun } from '@tda/contracts';
import {
  GoogleUserIdTokenVerifier,
  IAP_ASSERTION_HEADER,
  IAP_ISSUER,
  IapJwtVerifier,
} from '@tda/service-runtime';
import { OidcTestIssuer } from '@tda/service-runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startTestOrchestrator,
  TEST_TOKEN,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';
import { Access } from './access.decorator';
import { assertEveryRouteDecided } from './route-access';

const TRIGGER = { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT' } };
const USER_AUDIENCE = '1234-console.apps.googleusercontent.com';
const IAP_AUDIENCE = '/projects/123/locations/europe-west1/services/tda-orchestrator';

describe('identities: API tokens, Google accounts, IAP, X-TDA-Owner, audit', () => {
  let orc: TestOrchestrator;
  afterEach(async () => {
    await orc.close();
  });

  /** Every log line as text: no credential may ever appear in one. */
  const logText = () => JSON.stringify(orc.logs.records);

  it('creates a token once, lists it without the secret, accepts it, then refuses it once revoked', async () => {
    orc = await startTestOrchestrator();
    const created = await orc.request('POST', '/admin/tokens', {
      body: { ownerId: 'carol', role: 'user', name: 'carol laptop' },
    });
    expect(created.status).toBe(201);
    const { token, tokenId } = created.body as ApiToken & { token: string };
    expect(token).toMatch(/^tda_/);
    const listed = await orc.request('GET', '/admin/tokens?ownerId=carol');
    expect((listed.body as { tokens: ApiToken[] }).tokens.map((t) => t.tokenId)).toEqual([tokenId]);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const me = await orc.request('GET', '/me', { token });
    expect(me.body).toEqual({
      ownerId: 'carol',
      role: 'user',
      method: 'api_token',
      subject: tokenId,
    });
    expect((await orc.request('POST', '/runs', { body: TRIGGER, token })).body).toMatchObject({
      ownerId: 'carol',
    });

    expect((await orc.request('DELETE', `/admin/tokens/${tokenId}`)).body).toMatchObject({
      tokenId,
      revokedAt: expect.any(String) as unknown,
    });
    const refused = await orc.request('GET', '/me', { token });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'revoked' } });
    expect(orc.logs.withEvent('auth_rejected').at(-1)).toMatchObject({
      reason: 'revoked',
      tokenId,
    });
    expect(orc.logs.withEvent('api_token_created')).toHaveLength(1);
    expect(logText()).not.toContain(token);
  });

  it('refuses an expired token, an unknown one and a malformed header, saying why', async () => {
    orc = await startTestOrchestrator();
    const created = await orc.request('POST', '/admin/tokens', {
      body: { ownerId: 'carol', role: 'user', name: 'short', expiresInDays: 1 },
    });
    const { token } = created.body as { token: string };
    expect((await orc.request('GET', '/me', { token })).status).toBe(200);
    orc.clock.advance(24 * 60 * 60 * 1000);
    const cases: [string | null, Record<string, string>, string][] = [
      [token, {}, 'expired'],
      [`tda_${'x'.repeat(43)}`, {}, 'unknown_token'],
      [null, { authorization: 'Basic abc' }, 'malformed_token'],
      [null, {}, 'missing_token'],
    ];
    for (const [presented, headers, reason] of cases) {
      const res = await orc.request('GET', '/runs', { token: presented, headers });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ details: { reason } });
    }
    expect(logText()).not.toContain(token);
  });

  it('lets only an admin act for another owner with X-TDA-Owner, and audits it', async () => {
    orc = await startTestOrchestrator();
    const alice = await orc.tokenFor('alice');
    const bob = await orc.tokenFor('bob');
    const admin = await orc.tokenFor('ops', 'admin');
    const run = (await orc.request('POST', '/runs', { body: TRIGGER, token: alice }))
      .body as FlowRun;
    const asAlice = { 'X-TDA-Owner': 'alice' };
    const byBob = await orc.request('GET', `/runs/${run.runId}`, { token: bob, headers: asAlice });
    expect(byBob.status).toBe(403);
    expect(byBob.body).toMatchObject({ code: 'FORBIDDEN' });
    const own = await orc.request('GET', `/runs/${run.runId}`, { token: alice, headers: asAlice });
    expect(own.status).toBe(200);
    const byAdmin = await orc.request('POST', `/runs/${run.runId}/cancel`, {
      token: admin,
      headers: asAlice,
    });
    expect(byAdmin.body).toMatchObject({ status: 'CANCELLED' });
    expect((await orc.request('GET', `/runs/${run.runId}`, { token: admin })).status).toBe(404);
    await expect.poll(() => orc.logs.withEvent('audit_action').length).toBeGreaterThan(1);
    expect(orc.logs.withEvent('audit_action').at(-1)).toMatchObject({
      who: expect.stringMatching(/^tok_/) as unknown,
      role: 'admin',
      what: 'POST /runs/:runId/cancel',
      runId: run.runId,
      actingFor: 'alice',
      status: 200,
    });
    expect(logText()).not.toContain(alice);
  });

  it('maps a Google account to its owner; an unmapped account is refused', async () => {
    const google = new OidcTestIssuer({ audience: USER_AUDIENCE });
    orc = await startTestOrchestrator({
      userOidcVerifier: new GoogleUserIdTokenVerifier({
        audience: USER_AUDIENCE,
        keys: () => Promise.resolve(google.keys()),
      }),
    });
    const put = await orc.request('PUT', '/admin/identities/Dana@Example.com', {
      body: { ownerId: 'dana', role: 'user' },
    });
    expect(put.body).toMatchObject({ email: 'dana@example.com', ownerId: 'dana' });
    const me = await orc.request('GET', '/me', {
      token: google.token({ email: 'dana@example.com' }),
    });
    expect(me.body).toMatchObject({
      ownerId: 'dana',
      role: 'user',
      subject: 'google:dana@example.com',
    });
    const stranger = await orc.request('GET', '/me', {
      token: google.token({ email: 'eve@example.com' }),
    });
    expect(stranger.status).toBe(401);
    expect(stranger.body).toMatchObject({ details: { reason: 'unmapped_account' } });
    expect((await orc.request('DELETE', '/admin/identities/dana@example.com')).status).toBe(204);
    const gone = await orc.request('GET', '/me', {
      token: google.token({ email: 'dana@example.com' }),
    });
    expect(gone.status).toBe(401);
  });

  it('trusts an IAP header only once verified, and only when IAP is configured', async () => {
    const iap = new OidcTestIssuer({ audience: IAP_AUDIENCE, algorithm: 'ES256', kid: 'iap-1' });
    const assertion = (email: string) => iap.token({ iss: IAP_ISSUER, email });
    orc = await startTestOrchestrator({
      iapVerifier: new IapJwtVerifier({
        audience: IAP_AUDIENCE,
        keys: () => Promise.resolve(iap.keys()),
      }),
    });
    await orc.request('PUT', '/admin/identities/fay@example.com', {
      body: { ownerId: 'fay', role: 'admin' },
    });
    const me = await orc.request('GET', '/me', {
      token: null,
      headers: { [IAP_ASSERTION_HEADER]: assertion('fay@example.com') },
    });
    expect(me.body).toMatchObject({ ownerId: 'fay', role: 'admin', method: 'iap' });
    const bare = await orc.request('GET', '/me', {
      token: null,
      headers: { [IAP_ASSERTION_HEADER]: 'fay@example.com' },
    });
    expect(bare.status).toBe(401);
    await orc.close();

    orc = await startTestOrchestrator();
    const ignored = await orc.request('GET', '/me', {
      token: null,
      headers: { [IAP_ASSERTION_HEADER]: assertion('fay@example.com') },
    });
    expect(ignored.status).toBe(401);
    expect(ignored.body).toMatchObject({ details: { reason: 'missing_token' } });
  });

  it('keeps the operator token as an admin acting for TDA_DEFAULT_OWNER', async () => {
    orc = await startTestOrchestrator({ env: { TDA_DEFAULT_OWNER: 'ops' } });
    const me = await orc.request('GET', '/me', { token: TEST_TOKEN });
    expect(me.body).toEqual({
      ownerId: 'ops',
      role: 'admin',
      method: 'operator_token',
      subject: 'operator',
    });
  });
});

describe('assertEveryRouteDecided', () => {
  @Controller('forgotten')
  class ForgottenController {
    @Get()
    list(): string {
      return 'data';
    }

    @Access('public')
    @Get('open')
    open(): string {
      return 'open';
    }
  }

  it('refuses to boot with a route that has no @Access decision, naming it', () => {
    expect(() => assertEveryRouteDecided([ForgottenController])).toThrow(
      'routes without an authorization decision (@Access): GET /forgotten (ForgottenController.list)',
    );
  });
});
