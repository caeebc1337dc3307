import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowRun } from '@tda/contracts';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from './api-client';
import { runCli, type CliIo } from './cli';
import { LOCAL_API_FILE, resolveApiTarget } from './cli-config';
import { artifactUris, renderRun } from './run-view';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

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

/** Answers like the orchestrator: POST /runs and GET /runs/{id}, behind the bearer token. */
function orchestratorRoute(): (request: FakeApiRequest) => FakeApiAnswer {
  const run = finishedRun();
  const failed = makeFlowRun({ suffix: 'bad', status: 'FAILED' });
  return ({ method, url, headers, body }) => {
    if (headers.authorization !== `Bearer ${TOKEN}`) {
      return {
        status: 401,
        body: { code: 'UNAUTHENTICATED', message: 'missing or invalid bearer token' },
      };
    }
    if (method === 'POST' && url === '/runs') {
      const parsed = JSON.parse(body) as { flowKey: string };
      if (parsed.flowKey === 'nope_v1') {
        return {
          status: 400,
          body: {
            code: 'INVALID_REQUEST',
            message: 'unknown flowKey',
            details: { available: ['a_v1'] },
          },
        };
      }
      return { status: 201, body: run };
    }
    if (method === 'GET' && url === `/runs/${run.runId}`) return { status: 200, body: run };
    if (method === 'GET' && url === `/runs/${failed.runId}`) return { status: 200, body: failed };
    return { status: 404, body: { code: 'NOT_FOUND', message: 'no such route' } };
  };
}

describe('tda CLI', () => {
  let api: FakeApiServer;
  const out: string[] = [];
  const err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => ({ baseUrl: api.baseUrl, token: TOKEN, source: 'env' }),
    watchIntervalMs: 10,
  });

  beforeAll(async () => {
    api = await startFakeApiServer(orchestratorRoute());
  });
  afterAll(() => api.close());

  it('triggers a run with the bearer token and watches it to the end', async () => {
    out.length = 0;
    const code = await runCli(
      ['run', 'user_multi_tf_report_v1', '--symbol', 'BTC-USDT', '-t', '1d', '--watch'],
      io(),
    );
    expect(code).toBe(0);
    const post = api.requests.find((r) => r.method === 'POST');
    expect(post?.headers.authorization).toBe(`Bearer ${TOKEN}`);
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

  it('refuses a token that cannot be a header value (a pasted placeholder) before any request', () => {
    expect(() => resolveApiTarget({ TDA_API_URL: 'http://h:1', TDA_API_TOKEN: 'tda_…' })).toThrow(
      /TDA_API_TOKEN: must be the token exactly/,
    );
  });

  it('sends a Google identity token as X-Serverless-Authorization beside the API token', async () => {
    const target = resolveApiTarget({
      TDA_API_URL: 'http://h:1',
      TDA_API_TOKEN: 't',
      TDA_API_ID_TOKEN: 'google-id-token',
    });
    expect(target.identityToken).toBe('google-id-token');
    const api = await startFakeApiServer(() => ({ status: 200, body: [] }));
    try {
      const client = new ApiClient({
        baseUrl: api.baseUrl,
        token: 't',
        identityToken: target.identityToken ?? '',
      });
      await client.flows();
      await new ApiClient({ baseUrl: api.baseUrl, token: 't' }).flows();
    } finally {
      await api.close();
    }
    const seen = api.requests.map((request) => request.headers);
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
