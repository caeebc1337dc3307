import { Gauge, register as globalRegistry, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { type TdaMetrics, createMetrics } from './metrics';

describe('createMetrics', () => {
  it('exposes every instrument with its labels and the service label', async () => {
    const metrics = createMetrics({ service: 'worker-ohlcv-export' });
    metrics.stepClaims.inc({ stepType: 'OHLCV_EXPORT', result: 'claimed' });
    metrics.stepClaims.inc({ stepType: 'OHLCV_EXPORT', result: 'claimed' });
    metrics.stepClaims.inc({ stepType: 'OHLCV_EXPORT', result: 'conflict' });
    metrics.stepOutcomes.inc({
      stepType: 'OHLCV_EXPORT',
      status: 'FAILED',
      errorCode: 'GCS_WRITE_FAILED',
    });
    metrics.stepDurationSeconds.observe({ stepType: 'OHLCV_EXPORT', status: 'SUCCEEDED' }, 0.3);
    metrics.messagesHandled.inc({ subscription: 'step-ready.ohlcv_export', outcome: 'nack' });
    metrics.leaseLost.inc({ stepType: 'LLM_REPORT' });
    metrics.runsAdvanced.inc({ runStatus: 'RUNNING' }, 3);
    metrics.stepsDispatched.inc({ stepType: 'CHART_EXPORT', reason: 'advance' });
    metrics.stepDeliveries.inc({
      stepType: 'OHLCV_EXPORT',
      outcome: 'executed',
      status: 'SUCCEEDED',
    });
    metrics.storeConflicts.inc({ stepType: 'OHLCV_EXPORT', phase: 'finalize' });
    metrics.handlerRetries.inc({ stepType: 'OHLCV_EXPORT', code: 'MARKET_DATA_UNAVAILABLE' });

    const text = await metrics.render();
    const s = 'service="worker-ohlcv-export"';
    for (const line of [
      '# TYPE tda_step_claims_total counter',
      `tda_step_claims_total{${s},step_type="OHLCV_EXPORT",result="claimed"} 2`,
      `tda_step_claims_total{${s},step_type="OHLCV_EXPORT",result="conflict"} 1`,
      `tda_step_outcomes_total{${s},step_type="OHLCV_EXPORT",status="FAILED",error_code="GCS_WRITE_FAILED"} 1`,
      '# TYPE tda_step_duration_seconds histogram',
      `tda_step_duration_seconds_bucket{le="0.25",${s},step_type="OHLCV_EXPORT",status="SUCCEEDED"} 0`,
      `tda_step_duration_seconds_bucket{le="0.5",${s},step_type="OHLCV_EXPORT",status="SUCCEEDED"} 1`,
      `tda_step_duration_seconds_bucket{le="+Inf",${s},step_type="OHLCV_EXPORT",status="SUCCEEDED"} 1`,
      `tda_step_duration_seconds_sum{${s},step_type="OHLCV_EXPORT",status="SUCCEEDED"} 0.3`,
      `tda_step_duration_seconds_count{${s},step_type="OHLCV_EXPORT",status="SUCCEEDED"} 1`,
      `tda_messages_handled_total{${s},subscription="step-ready.ohlcv_export",outcome="nack"} 1`,
      `tda_lease_lost_total{${s},step_type="LLM_REPORT"} 1`,
      `tda_runs_advanced_total{${s},run_status="RUNNING"} 3`,
      `tda_steps_dispatched_total{${s},step_type="CHART_EXPORT",reason="advance"} 1`,
      `tda_step_deliveries_total{${s},step_type="OHLCV_EXPORT",outcome="executed",status="SUCCEEDED"} 1`,
      `tda_store_conflicts_total{${s},step_type="OHLCV_EXPORT",phase="finalize"} 1`,
      `tda_handler_retries_total{${s},step_type="OHLCV_EXPORT",code="MARKET_DATA_UNAVAILABLE"} 1`,
    ]) {
      expect(text.split('\n')).toContain(line);
    }
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('uses a dedicated registry per call and never the global one', async () => {
    const a = createMetrics({ service: 'orchestrator' });
    const b = createMetrics({ service: 'orchestrator' });
    expect(a.registry).not.toBe(b.registry);
    a.leaseLost.inc({ stepType: 'LLM_REPORT' });
    expect(await a.render()).toContain(
      'tda_lease_lost_total{service="orchestrator",step_type="LLM_REPORT"} 1',
    );
    expect(await b.render()).not.toContain('step_type="LLM_REPORT"');
    expect(await globalRegistry.metrics()).not.toContain('tda_');
  });

  it('shares one registry between services, told apart by the service label', async () => {
    const registry = new Registry();
    const orchestrator = createMetrics({ service: 'orchestrator', registry });
    const worker = createMetrics({ service: 'worker-chart-export', registry });
    orchestrator.stepsDispatched.inc({ stepType: 'CHART_EXPORT', reason: 'advance' });
    worker.stepClaims.inc({ stepType: 'CHART_EXPORT', result: 'noop' });
    const text = await worker.render();
    expect(text).toBe(await orchestrator.render());
    expect(text).toContain(
      'tda_steps_dispatched_total{service="orchestrator",step_type="CHART_EXPORT",reason="advance"} 1',
    );
    expect(text).toContain(
      'tda_step_claims_total{service="worker-chart-export",step_type="CHART_EXPORT",result="noop"} 1',
    );
    expect(text.match(/# TYPE tda_step_claims_total /g)).toHaveLength(1);
  });

  it('drops values an instrument cannot take instead of throwing', async () => {
    const metrics = createMetrics({ service: 'orchestrator' });
    const labels = { stepType: 'OHLCV_EXPORT', result: 'claimed' } as const;
    metrics.stepClaims.inc(labels, 2);
    expect(() => metrics.stepClaims.inc(labels, -1)).not.toThrow();
    expect(() => metrics.stepClaims.inc(labels, Number.NaN)).not.toThrow();
    expect(() =>
      metrics.stepDurationSeconds.observe({ stepType: 'OHLCV_EXPORT', status: 'FAILED' }, Infinity),
    ).not.toThrow();
    const text = await metrics.render();
    expect(text).toContain(
      'tda_step_claims_total{service="orchestrator",step_type="OHLCV_EXPORT",result="claimed"} 2',
    );
    expect(text).not.toContain('status="FAILED"');
  });

  it('times a step with startTimer', async () => {
    const metrics = createMetrics({ service: 'worker-ohlcv-export' });
    const stop = metrics.stepDurationSeconds.startTimer({
      stepType: 'OHLCV_EXPORT',
      status: 'SUCCEEDED',
    });
    const seconds = stop();
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(seconds).toBeLessThan(5);
    expect(await metrics.render()).toContain(
      'tda_step_duration_seconds_count{service="worker-ohlcv-export",step_type="OHLCV_EXPORT",status="SUCCEEDED"} 1',
    );
  });

  it('collects process metrics only when asked', async () => {
    const quiet = createMetrics({ service: 'orchestrator' });
    expect(await quiet.render()).not.toContain('process_cpu');
    const registry = new Registry();
    const loud = createMetrics({ service: 'orchestrator', registry, collectDefaultMetrics: true });
    // a second service on the same registry must not register them twice (prom-client would throw)
    createMetrics({ service: 'worker-ohlcv-export', registry, collectDefaultMetrics: true });
    expect(await loud.render()).toContain('# TYPE tda_process_cpu_user_seconds_total counter');
  });

  it('rejects an empty service name and a name taken by another metric type', () => {
    expect(() => createMetrics({ service: '' })).toThrow(/service/);
    const registry = new Registry();
    new Gauge({ name: 'tda_lease_lost_total', help: 'not ours', registers: [registry] });
    expect(() => createMetrics({ service: 'orchestrator', registry })).toThrow(
      /tda_lease_lost_total is already registered with another type/,
    );
  });
});

/**
 * Compile-time checks (run by tsc, never called): label values are typed, so a typo is a type
 * error rather than a new time series.
 */
function _labelTypeChecks(metrics: TdaMetrics): void {
  // @ts-expect-error 'won' is not a claim result
  metrics.stepClaims.inc({ stepType: 'OHLCV_EXPORT', result: 'won' });
  // @ts-expect-error not a step type
  metrics.leaseLost.inc({ stepType: 'ohlcv' });
  // @ts-expect-error not a message outcome
  metrics.messagesHandled.inc({ subscription: 's', outcome: 'dropped' });
  // Instruments fit structural ports like worker-kit's CounterLike / HistogramLike.
  const counterLike: { inc(labels: Record<string, string>, value?: number): void } =
    metrics.stepDeliveries;
  const histogramLike: { observe(labels: Record<string, string>, value: number): void } =
    metrics.stepDurationSeconds;
  void counterLike;
  void histogramLike;
  // @ts-expect-error errorCode must be an ErrorCode or 'none'
  metrics.stepOutcomes.inc({ stepType: 'LLM_REPORT', status: 'FAILED', errorCode: 'OOPS' });
}
