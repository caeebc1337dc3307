import type { FlowRun } from '@tda/contracts';
import { makeFlowRun } from '@tda/flow-store/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';
import { startFakeApiServer, type FakeApiServer } from './testing/fake-api.server';

const TOKEN = 'test-token-0123456789';
const CURSOR = 'eyJjIjoiMjAyNi0wMS0xNVQxMDowMDowMFoiLCJyIjoieCJ9';

/** `tda list`: one page of one run, with a next page while no cursor was sent. */
describe('tda list', () => {
  const run: FlowRun = makeFlowRun({ status: 'RUNNING' });
  let api: FakeApiServer;
  let out: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: () => true },
    target: () => ({ baseUrl: api.baseUrl, token: TOKEN, source: 'env' }),
  });
  /** The query of the n-th GET /runs, without the cursor, and the owner it acts for. */
  const filters = (n: number): Record<string, string> => {
    const query = new URL(api.requests[n]?.url ?? '', api.baseUrl).searchParams;
    query.delete('cursor');
    const owner = api.requests[n]?.headers['x-tda-owner'];
    return { ...Object.fromEntries(query), ...(typeof owner === 'string' ? { owner } : {}) };
  };
  const nextPageLine = (): string =>
    out.join('').match(/^next page: (tda list .*)$/m)?.[1] ?? 'no next-page line';

  beforeAll(async () => {
    api = await startFakeApiServer(({ url }) => ({
      status: 200,
      body: { runs: [run], nextCursor: url.includes('cursor=') ? null : CURSOR },
    }));
  });
  afterAll(() => api.close());
  beforeEach(() => {
    out = [];
    api.requests.length = 0;
  });

  it('the next-page command repeats every filter given, and asks for the same page', async () => {
    const argv = ['list', '--status', 'RUNNING', '--flow', 'market_charts_v1'];
    argv.push('--owner', 'alice@example.com', '--limit', '5');
    expect(await runCli(argv, io())).toBe(0);
    const next = nextPageLine();
    expect(next).toBe(
      `tda list --status RUNNING --flow market_charts_v1 --owner alice@example.com --limit 5 --cursor ${CURSOR}`,
    );

    expect(await runCli(next.split(' ').slice(1), io())).toBe(0);
    expect(filters(1)).toEqual(filters(0));
    expect(filters(0)).toEqual({
      status: 'RUNNING',
      flowKey: 'market_charts_v1',
      owner: 'alice@example.com',
      limit: '5',
    });
    expect(api.requests[1]?.url).toContain(`cursor=${CURSOR}`);
  });

  it('without filters the hint is the cursor alone; a value the shell would split is quoted', async () => {
    expect(await runCli(['list'], io())).toBe(0);
    expect(nextPageLine()).toBe(`tda list --cursor ${CURSOR}`);
    out = [];
    expect(await runCli(['list', '--owner', "o'neil x"], io())).toBe(0);
    expect(nextPageLine()).toBe(`tda list --owner 'o'\\''neil x' --cursor ${CURSOR}`);
  });
});
