import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';
import { startFakeApiServer, type FakeApiServer } from './testing/fake-api.server';

const TOKEN = 'test-token-0123456789';
const SECRET = `tda_${'s'.repeat(43)}`;
const RECORD = {
  tokenId: 'tok_0123456789abcdef',
  ownerId: 'carol',
  role: 'user',
  name: 'ci',
  createdAt: '2026-11-25T10:00:00.000Z',
  createdBy: 'operator',
};

/** `tda whoami`, `tda tokens …`, `tda identities …` against a scripted API. */
describe('identity commands', () => {
  let api: FakeApiServer;
  let out: string[] = [];
  let err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => ({ baseUrl: api.baseUrl, token: TOKEN, source: 'env' }),
  });

  beforeAll(async () => {
    api = await startFakeApiServer(({ method, url }) => {
      if (url === '/me') {
        return {
          status: 200,
          body: { ownerId: 'ops', role: 'admin', method: 'api_token', subject: 'tok_1' },
        };
      }
      if (method === 'POST' && url === '/admin/tokens') {
        return { status: 201, body: { ...RECORD, token: SECRET } };
      }
      if (url.startsWith('/admin/tokens?') || url === '/admin/tokens') {
        return {
          status: 200,
          body: { tokens: [{ ...RECORD, lastUsedAt: '2026-11-25T11:00:00.000Z' }] },
        };
      }
      if (method === 'DELETE' && url === '/admin/tokens/tok_missing') {
        return {
          status: 404,
          body: { code: 'NOT_FOUND', message: "token 'tok_missing' does not exist" },
        };
      }
      if (method === 'PUT') {
        return {
          status: 200,
          body: {
            email: 'dana@example.com',
            ownerId: 'dana',
            role: 'admin',
            createdAt: RECORD.createdAt,
            createdBy: 'operator',
          },
        };
      }
      return {
        status: 500,
        body: { code: 'INTERNAL_ERROR', message: `unexpected ${method} ${url}` },
      };
    });
  });
  afterAll(() => api.close());
  beforeEach(() => {
    out = [];
    err = [];
    api.requests.length = 0;
  });

  it('whoami prints the owner and role of the credential', async () => {
    expect(await runCli(['whoami'], io())).toBe(0);
    expect(out.join('')).toBe('tok_1: owner ops, role admin (api_token)\n');
  });

  it('tokens create sends owner, role, name and expiry, and prints the token once with a warning', async () => {
    const argv = ['tokens', 'create', '--owner', 'carol', '--name', 'ci', '--expires-days', '30'];
    expect(await runCli(argv, io())).toBe(0);
    expect(JSON.parse(api.requests[0]?.body ?? '{}')).toEqual({
      ownerId: 'carol',
      role: 'user',
      name: 'ci',
      expiresInDays: 30,
    });
    const text = out.join('');
    expect(text.split(SECRET)).toHaveLength(2);
    expect(text).toContain('not shown again');
  });

  it('tokens list shows ids and state, never a secret; --owner filters on the server', async () => {
    expect(await runCli(['tokens', 'list', '--owner', 'carol'], io())).toBe(0);
    expect(api.requests[0]?.url).toBe('/admin/tokens?ownerId=carol');
    expect(out.join('')).toMatch(
      /tok_0123456789abcdef\s+carol\s+user\s+ci\s+2026-11-25 10:00\s+2026-11-25 11:00\s+active/,
    );
  });

  it('refuses a bad role before calling the API, and reports an unknown token id', async () => {
    expect(
      await runCli(['tokens', 'create', '--owner', 'x', '--name', 'n', '--role', 'root'], io()),
    ).not.toBe(0);
    expect(err.join('')).toContain('--role must be user or admin');
    expect(api.requests).toHaveLength(0);
    expect(await runCli(['tokens', 'revoke', 'tok_missing'], io())).not.toBe(0);
    expect(err.join('')).toContain("token 'tok_missing' does not exist");
  });

  it('identities add maps an email to an owner and role', async () => {
    expect(
      await runCli(
        ['identities', 'add', 'Dana@Example.com', '--owner', 'dana', '--role', 'admin'],
        io(),
      ),
    ).toBe(0);
    expect(api.requests[0]).toMatchObject({
      method: 'PUT',
      url: '/admin/identities/Dana%40Example.com',
    });
    expect(out.join('')).toBe('dana@example.com → owner dana, role admin\n');
  });
});
