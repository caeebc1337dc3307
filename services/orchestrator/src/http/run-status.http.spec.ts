import { validate, type FlowRun, type RunStatusSummary } from '@tda/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestOrchestrator, type TestOrchestrator } from '../testing/orchestrator.harness';
import { ifNoneMatchHits } from './etag';

describe('GET /runs/{runId}/status (seed 004)', () => {
  let orc: TestOrchestrator | undefined;
  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  it('answers the status with an ETag; If-None-Match with it is a 304 until the run changes', async () => {
    orc = await startTestOrchestrator();
    const created = await orc.request('POST', '/runs', {
      body: { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT', timeframes: ['1d'] } },
    });
    const run = created.body as FlowRun;
    const first = await orc.request('GET', `/runs/${run.runId}/status`);
    expect(first.status).toBe(200);
    const summary = first.body as RunStatusSummary;
    expect(validate.runStatusSummary(summary).ok).toBe(true);
    expect(summary).toMatchObject({
      run_id: run.runId,
      status: 'running',
      run_status: 'RUNNING',
      current_step: 'ohlcv_export:1d',
      steps_total: 2,
      steps_completed: 0,
      error: null,
    });
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await orc.request('GET', `/runs/${run.runId}/status`, {
      headers: { 'If-None-Match': String(etag) },
    });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);

    await orc.request('POST', `/runs/${run.runId}/cancel`);
    const changed = await orc.request('GET', `/runs/${run.runId}/status`, {
      headers: { 'If-None-Match': String(etag) },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ status: 'cancelled', run_status: 'CANCELLED' });
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('is a 404 for an unknown run and a 400 for a malformed id', async () => {
    orc = await startTestOrchestrator();
    expect((await orc.request('GET', '/runs/20260101-000000_BTC-USDT_nope1/status')).status).toBe(
      404,
    );
    expect((await orc.request('GET', '/runs/not a run/status')).status).toBe(400);
  });

  it('If-None-Match: lists, weak tags and * match; other tags do not', () => {
    expect(ifNoneMatchHits('"a", W/"b"', '"b"')).toBe(true);
    expect(ifNoneMatchHits('*', '"x"')).toBe(true);
    expect(ifNoneMatchHits('"a"', '"b"')).toBe(false);
    expect(ifNoneMatchHits(undefined, '"b"')).toBe(false);
  });
});
