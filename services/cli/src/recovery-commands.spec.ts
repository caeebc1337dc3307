import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { makeFlowRun } from '@tda/flow-store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';

const TOKEN = 'test-token-0123456789';

interface Recorded {
  method: string;
  url: string;
  body: unknown;
}

/** Answers the recovery routes like the orchestrator does, recording every request. */
function fakeApi(): { server: Server; requests: Recorded[] } {
  const requests: Recorded[] = [];
  const source = makeFlowRun({ suffix: 'src', status: 'FAILED' });
  const rerun = makeFlowRun({ suffix: 'new', status: 'RUNNING' });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      requests.push({ method: req.method ?? '', url: req.url ?? '', body });
      const send = (status: number, payload: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      const url = req.url ?? '';
      if (url === `/runs/${source.runId}/steps/ohlcv_export%3A1w/retry`) {
        send(200, { ...source, status: 'RUNNING' });
      } else if (url === `/runs/${source.runId}/retry`) {
        send(409, {
          code: 'CONFLICT',
          message: 'run has no FAILED step to retry',
          details: { reason: 'no_failed_steps' },
        });
      } else if (url === `/runs/${source.runId}/rerun`) {
        send(201, rerun);
      } else if (url === '/admin/replay') {
        send(200, {
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
        });
      } else if (url === '/admin/snapshots') {
        send(201, { name: 'snap-1', subscription: 's', topic: 't' });
      } else send(404, { code: 'NOT_FOUND', message: 'no such route' });
    });
  });
  return { server, requests };
}

describe('tda retry / rerun / replay / snapshot', () => {
  const api = fakeApi();
  let baseUrl = '';
  const out: string[] = [];
  const err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => ({ baseUrl, token: TOKEN, source: 'env' }),
  });
  const source = makeFlowRun({ suffix: 'src' }).runId;
  const last = (): Recorded | undefined => api.requests.at(-1);

  beforeAll(async () => {
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', () => resolve()));
    const address = api.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => api.server.close(() => resolve()));
  });

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
