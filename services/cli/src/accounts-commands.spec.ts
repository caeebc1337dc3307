import type { Account } from '@tda/contracts';
import { cliRunner } from './testing/cli-runner';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

type NewAccountBody = Partial<Account> & { accountId: string };

/**
 * The accounts routes as the orchestrator answers them: one owner, ETag = a version counter,
 * PUT honouring If-Match (409 CONFLICT on a stale one). `interfere` lets a test write in between
 * a read and a write (another client).
 */
class FakeAccounts {
  readonly accounts = new Map<string, { account: Account; version: number }>();
  private counter = 0;
  interfere: (() => void) | undefined;

  route = ({ method, url, headers, body }: FakeApiRequest): FakeApiAnswer => {
    const [path = '', query = ''] = url.split('?');
    const id = decodeURIComponent(path.replace(/^\/accounts\/?/, ''));
    if (method === 'POST' && path === '/accounts')
      return this.create(JSON.parse(body) as NewAccountBody);
    if (method === 'GET' && path === '/accounts') return this.list(new URLSearchParams(query));
    const found = this.accounts.get(id);
    if (found === undefined) {
      return {
        status: 404,
        body: { code: 'NOT_FOUND', message: `account '${id}' does not exist` },
      };
    }
    if (method === 'GET') return this.answer(200, id);
    if (method === 'DELETE') {
      this.accounts.delete(id);
      return { status: 204, body: undefined };
    }
    this.interfere?.();
    this.interfere = undefined;
    const current = this.accounts.get(id);
    if (current === undefined) return { status: 404, body: { code: 'NOT_FOUND', message: 'gone' } };
    if (headers['if-match'] !== undefined && headers['if-match'] !== `"${current.version}"`) {
      return { status: 409, body: { code: 'CONFLICT', message: 'changed', retryable: true } };
    }
    this.write({ ...current.account, ...(JSON.parse(body) as Partial<Account>) });
    return this.answer(200, id);
  };

  write(account: Account): void {
    this.counter += 1;
    this.accounts.set(account.accountId, { account, version: this.counter });
  }

  private create(request: NewAccountBody): FakeApiAnswer {
    if (this.accounts.has(request.accountId)) {
      return { status: 409, body: { code: 'CONFLICT', message: 'exists' } };
    }
    const defaults: Account = {
      schemaVersion: 1,
      accountId: request.accountId,
      ownerId: 'local-user',
      name: request.accountId,
      quoteCurrency: 'USDT',
      positions: [],
      cash: 0,
      riskLimits: { maxPositionFraction: 0.1 },
      createdAt: '2026-09-01T08:00:00.000Z',
      updatedAt: '2026-09-01T08:00:00.000Z',
    };
    this.write({ ...defaults, ...request });
    return { ...this.answer(200, request.accountId), status: 201 };
  }

  private list(query: URLSearchParams): FakeApiAnswer {
    const limit = Number(query.get('limit') ?? '20');
    const all = [...this.accounts.values()].map((e) => e.account);
    return {
      status: 200,
      body: { accounts: all.slice(0, limit), nextCursor: all.length > limit ? 'next-1' : null },
    };
  }

  private answer(status: number, id: string): FakeApiAnswer {
    const entry = this.accounts.get(id);
    return { status, body: entry?.account, headers: { etag: `"${entry?.version ?? 0}"` } };
  }
}

describe('tda accounts', () => {
  let api: FakeApiServer;
  const fake = new FakeAccounts();
  const cli = cliRunner(() => api.baseUrl);

  beforeAll(async () => {
    api = await startFakeApiServer(fake.route);
  });
  afterAll(() => api.close());
  beforeEach(() => {
    fake.accounts.clear();
    api.requests.length = 0;
  });

  it('create sends the account and prints it', async () => {
    const result = await cli(
      'accounts',
      'create',
      'demo',
      '--cash',
      '10000',
      '--quote',
      'usdt',
      '--name',
      'Demo',
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(api.requests[0]?.body ?? '{}')).toEqual({
      accountId: 'demo',
      quoteCurrency: 'USDT',
      name: 'Demo',
      cash: 10_000,
      riskLimits: { maxPositionFraction: 0.1 },
    });
    expect(result.out).toContain('created demo');
    expect(result.out).toContain('cash: 10,000 USDT');
    expect(result.out).toContain('max position 10% of equity');
  });

  it.each([
    [['--cash', '-5'], /--cash must be a number >= 0/],
    [['--cash', '10', '--max-position', '2'], /--max-position must be a number in 0..1/],
    [[], /--cash is required/],
  ])('create refuses %j before calling the API', async (flags, message) => {
    const result = await cli('accounts', 'create', 'demo', ...flags);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(message);
    expect(api.requests).toEqual([]);
  });

  it('list prints a compact table; show prints the positions', async () => {
    await cli('accounts', 'create', 'demo', '--cash', '10000');
    await cli('accounts', 'create', 'live', '--exchange', 'binance', '--max-position', '0.05');
    await cli('accounts', 'set-position', 'demo', 'BTC-USDT', '--size', '0.5', '--entry', '60000');
    const list = await cli('accounts', 'list');
    expect(list.out.split('\n').slice(0, 3)).toEqual([
      'ACCOUNT  NAME  CASH         POSITIONS  MAX POSITION  SOURCE',
      'demo     demo  10,000 USDT  1          10%           paper',
      'live     live  — USDT       —          5%            exchange binance',
    ]);
    const show = await cli('accounts', 'show', 'demo');
    expect(show.out).toContain('SYMBOL    SIDE  SIZE  ENTRY   OPENED');
    expect(show.out).toContain('BTC-USDT  long  0.5   60,000  —');
  });

  it('set-position replaces the same market, remove-position closes it, both with If-Match', async () => {
    await cli('accounts', 'create', 'demo', '--cash', '10000');
    await cli('accounts', 'set-position', 'demo', 'BTC-USDT', '--size', '0.5', '--entry', '60000');
    await cli(
      'accounts',
      'set-position',
      'demo',
      'btc/usdt',
      '--size',
      '1',
      '--entry',
      '70000',
      '--side',
      'short',
    );
    expect(fake.accounts.get('demo')?.account.positions).toEqual([
      { symbol: 'btc/usdt', side: 'short', size: 1, averageEntry: 70_000 },
    ]);
    const puts = api.requests.filter((r) => r.method === 'PUT');
    expect(puts.every((r) => typeof r.headers['if-match'] === 'string')).toBe(true);
    expect((await cli('accounts', 'remove-position', 'demo', 'BTC-USDT')).code).toBe(0);
    expect(fake.accounts.get('demo')?.account.positions).toEqual([]);
    const missing = await cli('accounts', 'remove-position', 'demo', 'ETH-USDT');
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.err).toMatch(/NOT_FOUND: demo has no position in ETH-USDT/);
  });

  it('a write in between (409) is re-read and re-decided, keeping the other client’s change', async () => {
    await cli('accounts', 'create', 'demo', '--cash', '10000');
    fake.interfere = () => {
      const current = fake.accounts.get('demo')?.account;
      if (current === undefined) return;
      fake.write({
        ...current,
        positions: [{ symbol: 'ETH-USDT', side: 'long', size: 2, averageEntry: 2_500 }],
      });
    };
    const result = await cli(
      'accounts',
      'set-position',
      'demo',
      'BTC-USDT',
      '--size',
      '0.5',
      '--entry',
      '60000',
    );
    expect(result.code).toBe(0);
    expect(fake.accounts.get('demo')?.account.positions.map((p) => p.symbol)).toEqual([
      'ETH-USDT',
      'BTC-USDT',
    ]);
    expect(api.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);
  });

  it('delete, then show is a clean NOT_FOUND', async () => {
    await cli('accounts', 'create', 'demo', '--cash', '1');
    expect((await cli('accounts', 'delete', 'demo')).out).toBe('deleted demo\n');
    const show = await cli('accounts', 'show', 'demo');
    expect(show.code).toBe(1);
    expect(show.err).toMatch(/error NOT_FOUND \(HTTP 404\)/);
  });
});
