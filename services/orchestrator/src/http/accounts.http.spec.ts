import { validate, type Account } from '@tda/contracts';
import { readSchema } from '@tda/contracts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountsService } from '../accounts/accounts.service';
import { startTestOrchestrator, type TestOrchestrator } from '../testing/orchestrator.harness';
import { OPENAPI_SCHEMAS } from './openapi.document';

const DEMO = {
  accountId: 'demo',
  name: 'Demo',
  quoteCurrency: 'USDT',
  cash: 10_000,
  positions: [{ symbol: 'BTC-USDT', side: 'long', size: 0.5, averageEntry: 60_000 }],
  riskLimits: { maxPositionFraction: 0.1 },
};
const OTHER = { 'X-TDA-Owner': 'someone-else' };

function apiError(body: unknown): { code: string; details?: Record<string, unknown> } {
  const checked = validate.apiError(body);
  if (!checked.ok) throw new Error(`not an ApiError: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

describe('accounts API', () => {
  let orc: TestOrchestrator | undefined;
  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  async function started(): Promise<TestOrchestrator> {
    orc = await startTestOrchestrator();
    return orc;
  }

  it('POST creates (201, Location, ETag), GET reads it back, a second POST is 409', async () => {
    const o = await started();
    const created = await o.request('POST', '/accounts', { body: DEMO });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/accounts/demo');
    const etag = created.headers.get('etag');
    expect(etag).toMatch(/^"\S+"$/);
    const account = created.body as Account;
    expect(validate.account(account).ok).toBe(true);
    expect(account).toMatchObject({ ...DEMO, ownerId: 'local-user', schemaVersion: 1 });

    const read = await o.request('GET', '/accounts/demo');
    expect(read).toMatchObject({ status: 200, body: account });
    expect(read.headers.get('etag')).toBe(etag);

    const again = await o.request('POST', '/accounts', { body: { ...DEMO, cash: 1 } });
    expect(again.status).toBe(409);
    expect(apiError(again.body).code).toBe('CONFLICT');
  });

  it('defaults a name and the risk limits; an exchange account holds no cash', async () => {
    const o = await started();
    const paper = await o.request('POST', '/accounts', {
      body: { accountId: 'p1', quoteCurrency: 'USDT', cash: 500 },
    });
    expect(paper.body).toMatchObject({
      name: 'p1',
      positions: [],
      riskLimits: { maxPositionFraction: 0.1 },
    });
    const live = await o.request('POST', '/accounts', {
      body: { accountId: 'live', quoteCurrency: 'USDT', exchange: 'binance' },
    });
    expect(live).toMatchObject({ status: 201, body: { exchange: 'binance', cash: 0 } });
  });

  it.each([
    ['not an object', [1, 2]],
    ['an unknown field', { ...DEMO, leverage: 3 }],
    ['a missing quoteCurrency', { accountId: 'x', cash: 1 }],
    ['a negative cash', { ...DEMO, cash: -1 }],
    ['a bad side', { ...DEMO, positions: [{ ...DEMO.positions[0], side: 'up' }] }],
    [
      'a position in another currency',
      { ...DEMO, positions: [{ ...DEMO.positions[0], symbol: 'ETH-BTC' }] },
    ],
    ['a malformed id', { ...DEMO, accountId: 'a b' }],
  ])('POST with %s is a 400 with code, message and details', async (_case, body) => {
    const o = await started();
    const res = await o.request('POST', '/accounts', { body });
    expect(res.status).toBe(400);
    const error = apiError(res.body);
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.details).toBeDefined();
  });

  it("another owner's account is a 404 for every route, and absent from its list", async () => {
    const o = await started();
    await o.request('POST', '/accounts', { body: DEMO });
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { cash: 1 }],
      ['DELETE', undefined],
    ] as const) {
      const res = await o.request(method, '/accounts/demo', {
        headers: OTHER,
        ...(body === undefined ? {} : { body }),
      });
      expect(res.status, method).toBe(404);
      expect(apiError(res.body).code).toBe('NOT_FOUND');
    }
    expect((await o.request('GET', '/accounts', { headers: OTHER })).body).toEqual({
      accounts: [],
      nextCursor: null,
    });
    expect((await o.request('GET', '/accounts/demo')).body).toMatchObject({ cash: 10_000 });
  });

  it('GET /accounts pages by accountId with a cursor; bad parameters are 400', async () => {
    const o = await started();
    for (const id of ['c', 'a', 'b']) {
      await o.request('POST', '/accounts', { body: { ...DEMO, accountId: id } });
    }
    const first = await o.request('GET', '/accounts?limit=2');
    const page = first.body as { accounts: Account[]; nextCursor: string };
    expect(page.accounts.map((a) => a.accountId)).toEqual(['a', 'b']);
    const second = await o.request(
      'GET',
      `/accounts?limit=2&cursor=${encodeURIComponent(page.nextCursor)}`,
    );
    expect(second.body).toMatchObject({ accounts: [{ accountId: 'c' }], nextCursor: null });
    for (const query of ['limit=0', 'limit=x', 'cursor=nope', 'owner=a']) {
      expect((await o.request('GET', `/accounts?${query}`)).status, query).toBe(400);
    }
  });

  it('PUT replaces fields; If-Match of an older version is a 409 and writes nothing', async () => {
    const o = await started();
    const created = await o.request('POST', '/accounts', { body: DEMO });
    const firstEtag = created.headers.get('etag') ?? '';
    const put = await o.request('PUT', '/accounts/demo', {
      body: { positions: [], riskLimits: { maxPositionFraction: 0.2 } },
      headers: { 'If-Match': firstEtag },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      cash: 10_000,
      positions: [],
      riskLimits: { maxPositionFraction: 0.2 },
    });
    expect(put.headers.get('etag')).not.toBe(firstEtag);

    const stale = await o.request('PUT', '/accounts/demo', {
      body: { cash: 1 },
      headers: { 'If-Match': firstEtag },
    });
    expect(stale.status).toBe(409);
    expect(apiError(stale.body)).toMatchObject({ code: 'CONFLICT', retryable: true });
    expect((await o.request('GET', '/accounts/demo')).body).toMatchObject({ cash: 10_000 });

    expect((await o.request('PUT', '/accounts/demo', { body: {} })).status).toBe(400);
    expect(
      (await o.request('PUT', '/accounts/demo', { body: { quoteCurrency: 'EUR' } })).status,
    ).toBe(400);
    expect((await o.request('PUT', '/accounts/missing', { body: { cash: 1 } })).status).toBe(404);
  });

  it('DELETE removes the account (204); a second DELETE is 404', async () => {
    const o = await started();
    await o.request('POST', '/accounts', { body: DEMO });
    expect((await o.request('DELETE', '/accounts/demo')).status).toBe(204);
    expect((await o.request('GET', '/accounts/demo')).status).toBe(404);
    expect((await o.request('DELETE', '/accounts/demo')).status).toBe(404);
  });

  it('findOwned: the lookup the trigger uses', async () => {
    const o = await started();
    await o.request('POST', '/accounts', { body: DEMO });
    const lookup = o.app.get(AccountsService);
    expect(await lookup.findOwned('local-user', 'demo')).toMatchObject({ accountId: 'demo' });
    expect(await lookup.findOwned('someone-else', 'demo')).toBeUndefined();
    expect(await lookup.findOwned('local-user', 'nope')).toBeUndefined();
    expect(await lookup.findOwned('local-user', 'bad/id')).toBeUndefined();
  });

  it('the OpenAPI Account names the contract’s required fields and only its properties', () => {
    const contract = readSchema('account') as { required: string[]; properties: object };
    const component = OPENAPI_SCHEMAS['Account'] as { required: string[]; properties: object };
    expect(component.required).toEqual(contract.required);
    expect(Object.keys(component.properties).sort()).toEqual(
      Object.keys(contract.properties).sort(),
    );
  });
});
