import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowRun } from '@tda/contracts';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from './api-client';
import { runCli, type CliIo } from './cli';
import { LOCAL_API_FILE, resolveApiTarget } from './cli-config';
import { artifactUris, renderRun } from './run-view';

const TOKEN = 'test-token-0123456789';

function finishedRun(): FlowRun {
  return makeFlowRun({
    status: 'SUCCEEDED',
    steps: {
      'ohlcv_export:1d': makeStep({
        status: 'SUCCEEDED',
        outputs: { gcs_uri: 'gs://tda-artifacts/runs/r/1d/ohlcv_export:1d.json' },
      }),
    },
  });
}

/** A stand-in API that records requests and answers like the orchestrator. */
function fakeApi(): {
  server: Server;
  requests: { method: string; url: string; auth: string; body: string }[];
} {
  const requests: { method: string; url: string; auth: string; body: string }[] = [];
  const run = finishedRun();
  const failed = makeFlowRun({ suffix: 'bad', status: 'FAILED' });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        auth: req.headers.authorization ?? '',
        body,
      });
      const send = (status: number, payload: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        send(401, { code: 'UNAUTHENTICATED', message: 'missing or invalid bearer token' });
      } else if (req.method === 'POST' && req.url === '/runs') {
        const parsed = JSON.parse(body) as { flowKey: string };
        if (parsed.flowKey === 'nope_v1') {
          send(400, {
            code: 'INVALID_REQUEST',
            message: 'unknown flowKey',
            details: { available: ['a_v1'] },
          });
        } else send(201, run);
      } else if (req.method === 'GET' && req.url === `/runs/${run.runId}`) {
        send(200, run);
      } else if (req.method === 'GET' && req.url === `/runs/${failed.runId}`) {
        send(200, failed);
      } else send(404, { code: 'NOT_FOUND', message: 'no such route' });
    });
  });
  return { server, requests };
}

describe('tda CLI', () => {
  const api = fakeApi();
  let baseUrl = '';
  const out: string[] = [];
  const err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => ({ baseUrl, token: TOKEN, source: 'env' }),
    watchIntervalMs: 10,
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', () => resolve()));
    const address = api.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => api.server.close(() => resolve()));
  });

  it('triggers a run with the bearer token and watches it to the end', async () => {
    out.length = 0;
    const code = await runCli(
      ['run', 'user_multi_tf_report_v1', '--symbol', 'BTC-USDT', '-t', '1d', '--watch'],
      io(),
    );
    expect(code).toBe(0);
    const post = api.requests.find((r) => r.method === 'POST');
    expect(post?.auth).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(post?.body ?? '{}')).toEqual({
      flowKey: 'user_multi_tf_report_v1',
      scope: { symbol: 'BTC-USDT', timeframes: ['1d'] },
    });
    const text = out.join('');
    expect(text).toContain('created');
    expect(text).toContain('SUCCEEDED');
    expect(text).toContain('gs://tda-artifacts/runs/r/1d/ohlcv_export:1d.json');
  });

  it('exits 1 when a watched run fails, without leaking that code into the next invocation', async () => {
    const failedId = makeFlowRun({ suffix: 'bad' }).runId;
    expect(await runCli(['watch', failedId], io())).toBe(1);
    expect(await runCli(['get', failedId], io())).toBe(0);
    expect(process.exitCode ?? 0).toBe(0);
  });

  it('prints the API error code, message and details and exits 1', async () => {
    err.length = 0;
    const code = await runCli(['run', 'nope_v1', '--symbol', 'BTC-USDT'], io());
    expect(code).toBe(1);
    expect(err.join('')).toContain('error INVALID_REQUEST (HTTP 400): unknown flowKey');
    expect(err.join('')).toContain('a_v1');
  });

  it('reports an unreachable API clearly', async () => {
    err.length = 0;
    const code = await runCli(['get', 'x'], {
      ...io(),
      target: () => ({ baseUrl: 'http://127.0.0.1:9', token: TOKEN, source: 'env' }),
    });
    expect(code).toBe(1);
    expect(err.join('')).toMatch(/UPSTREAM_UNAVAILABLE: cannot reach http:\/\/127\.0\.0\.1:9/);
  });
});

describe('API target resolution', () => {
  it('prefers TDA_API_URL / TDA_API_TOKEN', () => {
    expect(resolveApiTarget({ TDA_API_URL: 'http://h:1', TDA_API_TOKEN: 't' })).toEqual({
      baseUrl: 'http://h:1',
      token: 't',
      source: 'env',
    });
  });

  it('sends a Google identity token as X-Serverless-Authorization beside the API token', async () => {
    const target = resolveApiTarget({
      TDA_API_URL: 'http://h:1',
      TDA_API_TOKEN: 't',
      TDA_API_ID_TOKEN: 'google-id-token',
    });
    expect(target.identityToken).toBe('google-id-token');
    const seen: Record<string, string | string[] | undefined>[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const client = new ApiClient({
        baseUrl: `http://127.0.0.1:${port}`,
        token: 't',
        identityToken: target.identityToken ?? '',
      });
      await client.flows();
      await new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't' }).flows();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(seen[0]).toMatchObject({
      authorization: 'Bearer t',
      'x-serverless-authorization': 'Bearer google-id-token',
    });
    expect(seen[1]).not.toHaveProperty('x-serverless-authorization');
  });

  it('falls back to the file written by npm start, and explains when it is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tda-cli-'));
    expect(() => resolveApiTarget({ TDA_DATA_DIR: dir })).toThrow(/npm start/);
    writeFileSync(
      join(dir, LOCAL_API_FILE),
      JSON.stringify({ url: 'http://127.0.0.1:8080', token: 'abc' }),
    );
    expect(resolveApiTarget({ TDA_DATA_DIR: dir })).toMatchObject({
      baseUrl: 'http://127.0.0.1:8080',
      token: 'abc',
      source: 'local-stack',
    });
  });
});

describe('run view', () => {
  it('shows each step with its status and error, and lists artifacts', () => {
    const run = makeFlowRun({
      status: 'FAILED',
      steps: {
        'ohlcv_export:1d': makeStep({
          status: 'SUCCEEDED',
          outputs: { gcs_uri: 'gs://b/p/a.json' },
        }),
        'llm_report:1d:prompt_day_v1': makeStep({
          stepType: 'LLM_REPORT',
          status: 'FAILED',
          dependsOn: ['ohlcv_export:1d'],
          error: {
            code: 'LLM_SAFETY_BLOCK',
            message: 'blocked by safety filters',
            retryable: false,
          },
        }),
      },
    });
    const text = renderRun(run, new Date(run.createdAt)).join('\n');
    expect(text).toContain('status FAILED');
    expect(text).toContain('2/2 steps');
    expect(text).toMatch(/✖ llm_report:1d:prompt_day_v1\s+FAILED/);
    expect(text).toContain('LLM_SAFETY_BLOCK: blocked by safety filters');
    expect(artifactUris(run)).toEqual([{ stepId: 'ohlcv_export:1d', uri: 'gs://b/p/a.json' }]);
  });
});
