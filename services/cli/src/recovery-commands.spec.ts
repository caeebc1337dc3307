import { makeFlowRun } from '@tda/flow-store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';
import {
  startFakeApiServer,
  type FakeApiAnswer,
  type FakeApiRequest,
  type FakeApiServer,
} from './testing/fake-api.server';

const TOKEN = 'test-token-0123456789';

/** Answers the recovery routes like the orchestrator does. */
function recoveryRoute(): (request: FakeApiRequest) => FakeApiAnswer {
  const source = makeFlowRun({ suffix: 'src', status: 'FAILED' });
  const rerun = makeFlowRun({ suffix: 'new', status: 'RUNNING' });
  return ({ url }) => {
    if (url === `/runs/${source.runId}/steps/ohlcv_export%3A1w/retry`) {
      return { status: 200, body: { ...source, status: 'RUNNING' } };
    }
    if (url === `/runs/${source.runId}/retry`) {
      return {
        status: 409,
        body: {
          code: 'CONFLICT',
          message: 'run has no FAILED step to retry',
          details: { reason: 'no_failed_steps' },
        },
      };
    }
    if (url === `/runs/${source.runId}/rerun`) return { status: 201, body: rerun };
    if (url === '/admin/replay') {
      return {
        status: 200,
        body: {
          subscription: 'tda-step-ready-chart-export-sub',
          kind: 'step_ready',
          dryRun: true,
          seeked: false,
          since: '2026-01-01T00:00:00.000Z',
          note: "Derived from TDA's run documents",
          scannedRuns: 1,
          truncated: false,
          counts: { noop: 1 },
          steps: [
            { runId: source.runId, stepId: 'charts:1w:x', summary: 'noop: the run is FAILED' },
          ],
        },
      };
    }
    if (url === '/admin/snapshots') {
      return { status: 201, body: { name: 'snap-1', subscription: 's', topic: 't' } };
    }
    return { status: 404, body: { code: 'NOT_FOUND', message: 'no such route' } };
  };
}

describe('tda retry / rerun / replay / snapshot', () => {
  let api: FakeApiServer;
  const out: string[] = [];
  const err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => ({ baseUrl: api.baseUrl, token: TOKEN, source: 'env' }),
  });
  const source = makeFlowRun({ suffix: 'src' }).runId;
  /** The last request, its JSON body parsed (undefined when it had none). */
  const last = (): { method: string; url: string; body: unknown } | undefined => {
    const request = api.requests.at(-1);
    if (request === undefined) return undefined;
    const { method, url, body } = request;
    return { method, url, body: body === '' ? undefined : (JSON.parse(body) as unknown) };
  };

  beforeAll(async () => {
    api = await startFakeApiServer(recoveryRoute());
  });
  afterAll(() => api.close());

  it('retries one step, and reports a 409 for a run retry with its reason', async () => {
    out.length = 0;
    expect(await runCli(['retry', source, 'ohlcv_export:1w'], io())).toBe(0);
    expect(last()).toMatchObject({ method: 'POST', body: undefined });
    expect(out.join('')).toContain(`${source} RUNNING (retried ohlcv_export:1w)`);

    err.length = 0;
    expect(await runCli(['retry', source], io())).toBe(1);
    expect(err.join('')).toContain('error CONFLICT (HTTP 409): run has no FAILED step to retry');
    expect(err.join('')).toContain('no_failed_steps');
  });

  it('reruns from a step', async () => {
    out.length = 0;
    expect(await runCli(['rerun', source, '--from', 'llm_report:1w:p:m'], io())).toBe(0);
    expect(last()).toMatchObject({
      url: `/runs/${source}/rerun`,
      body: { fromStepId: 'llm_report:1w:p:m' },
    });
    expect(out.join('')).toMatch(/created \S+_new \(rerun of \S+ from llm_report:1w:p:m\)/);
  });

  it('prints a replay preview line per step, and creates snapshots', async () => {
    out.length = 0;
    const code = await runCli(
      ['replay', 'tda-step-ready-chart-export-sub', '--time', '2026-01-01T00:00:00Z', '--dry-run'],
      io(),
    );
    expect(code).toBe(0);
    expect(last()?.body).toEqual({
      subscription: 'tda-step-ready-chart-export-sub',
      time: '2026-01-01T00:00:00Z',
      dryRun: true,
    });
    const text = out.join('');
    expect(text).toContain('dry run: tda-step-ready-chart-export-sub');
    expect(text).toContain('noop 1');
    expect(text).toContain(`${source}  charts:1w:x  noop: the run is FAILED`);

    out.length = 0;
    expect(await runCli(['snapshot', 's', 'snap-1'], io())).toBe(0);
    expect(last()?.body).toEqual({ subscription: 's', name: 'snap-1' });
    expect(out.join('')).toContain('"name": "snap-1"');
  });
});
