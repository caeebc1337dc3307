import { OidcTestIssuer } from '@tda/service-runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrchestratorConfig } from '../config';
import {
  startTestOrchestrator,
  TEST_TOKEN,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

const SCHEDULER = 'tda-scheduler@acme-tda-prod.iam.gserviceaccount.com';

describe('admin API: Google ID token of the admin OIDC principal (Cloud Scheduler)', () => {
  const issuer = new OidcTestIssuer({
    audience: 'tda-orchestrator',
    serviceAccountEmail: SCHEDULER,
  });
  let orchestrator: TestOrchestrator;

  beforeAll(async () => {
    orchestrator = await startTestOrchestrator({ adminOidcVerifier: issuer.verifier() });
  });
  afterAll(async () => {
    await orchestrator.close();
  });

  it('runs POST /admin/reconcile for a valid token of the configured account', async () => {
    const res = await orchestrator.request('POST', '/admin/reconcile', { token: issuer.token() });
    expect(res.status).toBe(200);
  });

  it.each([
    [
      'another service account',
      () => issuer.token({ email: 'intruder@acme.iam.gserviceaccount.com' }),
    ],
    ['another audience', () => issuer.token({ aud: 'tda-worker-ohlcv-export' })],
    [
      'an expired token',
      () =>
        issuer.token({
          exp: Math.floor(Date.now() / 1000) - 600,
          iat: Math.floor(Date.now() / 1000) - 4000,
        }),
    ],
    ['a token signed by another key', () => issuer.token({}, { signWith: new OidcTestIssuer() })],
    ['garbage', () => 'not-a-jwt'],
  ])('refuses %s with 401 UNAUTHENTICATED', async (_, token) => {
    const res = await orchestrator.request('POST', '/admin/reconcile', { token: token() });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('still accepts the API token', async () => {
    const res = await orchestrator.request('GET', '/runs', { token: TEST_TOKEN });
    expect(res.status).toBe(200);
  });
});

describe('TDA_ADMIN_OIDC_* config', () => {
  it('needs the audience and the service account together', () => {
    expect(() =>
      loadOrchestratorConfig({
        TDA_API_TOKEN: TEST_TOKEN,
        TDA_ADMIN_OIDC_AUDIENCE: 'tda-orchestrator',
      }),
    ).toThrow(/TDA_ADMIN_OIDC_SERVICE_ACCOUNT/);
    expect(
      loadOrchestratorConfig({
        TDA_API_TOKEN: TEST_TOKEN,
        TDA_ADMIN_OIDC_AUDIENCE: 'tda-orchestrator',
        TDA_ADMIN_OIDC_SERVICE_ACCOUNT: SCHEDULER,
      }).TDA_ADMIN_OIDC_SERVICE_ACCOUNT,
    ).toBe(SCHEDULER);
  });
});
