import type { FlowRun, ReportIndexEntry } from '@tda/contracts';
import { reportIdFor } from '@tda/flow-engine';
import { stepEventsSubscription } from '@tda/messaging';
import {
  InMemoryReportIndexStore,
  IndexStoreUnavailableError,
  type IndexCreateOutcome,
  type ReportIndexStore,
} from '@tda/report-index';
import { afterEach, describe, expect, it } from 'vitest';
import { reportFileFor } from '../testing/index.fixtures';
import {
  publishStepEvent,
  simulateWorker,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

/**
 * The index through the step-event consumer (in-memory harness): a SUCCEEDED LLM_REPORT event
 * writes reports/{reportId} once; a duplicated event, a replay (seek of the step-events
 * subscription) and a redelivery after a failed write create nothing new.
 */

const TRIGGER = { flowKey: 'scheduled_month_week_report_v1', scope: { symbol: 'BTC-USDT' } };
const EVENTS_SUB = stepEventsSubscription();

/** The in-memory index, counting what each create answered; createReport can fail on demand. */
class RecordingIndex implements ReportIndexStore {
  readonly inner = new InMemoryReportIndexStore();
  readonly creates: IndexCreateOutcome[] = [];
  failNextCreates = 0;

  async createReport(entry: ReportIndexEntry): Promise<IndexCreateOutcome> {
    if (this.failNextCreates > 0) {
      this.failNextCreates -= 1;
      throw new IndexStoreUnavailableError('createReport', 'UNAVAILABLE', new Error('down'));
    }
    const outcome = await this.inner.createReport(entry);
    this.creates.push(outcome);
    return outcome;
  }
  createRecommendation: ReportIndexStore['createRecommendation'] = (e) =>
    this.inner.createRecommendation(e);
  getReport: ReportIndexStore['getReport'] = (id) => this.inner.getReport(id);
  getRecommendation: ReportIndexStore['getRecommendation'] = (id) =>
    this.inner.getRecommendation(id);
  listReports: ReportIndexStore['listReports'] = (q) => this.inner.listReports(q);
  listRecommendations: ReportIndexStore['listRecommendations'] = (q) =>
    this.inner.listRecommendations(q);
}

function stepTypeOf(run: FlowRun, stepId: string) {
  const stepType = run.steps[stepId]?.stepType;
  if (stepType === undefined) throw new Error(`no step ${stepId}`);
  return stepType;
}

async function finish(orc: TestOrchestrator, run: FlowRun, stepId: string): Promise<void> {
  const attempt = await simulateWorker(orc.store, run.runId, stepId, orc.clock.now);
  await publishStepEvent(orc.broker, {
    runId: run.runId,
    stepId,
    stepType: stepTypeOf(run, stepId),
    status: 'SUCCEEDED',
    attempt,
    at: orc.clock.now().toISOString(),
  });
}

function ackedFor(orc: TestOrchestrator, stepId: string): Record<string, unknown>[] {
  return orc.logs
    .withEvent('message_acked')
    .filter((r) => r['subscription'] === EVENTS_SUB && r['stepId'] === stepId);
}

/** Triggers flow 1 and finishes the 1M report: its export, charts and the report step itself. */
async function reportFinished(orc: TestOrchestrator): Promise<{ run: FlowRun; stepId: string }> {
  const created = await orc.request('POST', '/runs', { body: TRIGGER });
  expect(created.status).toBe(201);
  const run = created.body as FlowRun;
  const stepId = Object.keys(run.steps).find((id) => id.startsWith('llm_report:1M'));
  if (stepId === undefined) throw new Error('flow 1 has no 1M report');
  for (const upstream of run.steps[stepId]?.dependsOn ?? []) {
    if (upstream.startsWith('charts')) continue;
    await finish(orc, run, upstream);
    await expect.poll(() => ackedFor(orc, upstream).length).toBe(1);
  }
  const charts = (run.steps[stepId]?.dependsOn ?? []).find((id) => id.startsWith('charts'));
  if (charts !== undefined) {
    await finish(orc, run, charts);
    await expect.poll(() => ackedFor(orc, charts).length).toBe(1);
  }
  // The worker's artifact, where simulateWorker records it.
  const file = reportFileFor(run.runId, stepId, '# BTC-USDT monthly', '1M');
  await orc.artifacts.put(
    `gs://tda-artifacts/runs/${run.runId}/${stepId}.json`,
    Buffer.from(JSON.stringify(file)),
    { contentType: 'application/json' },
  );
  await finish(orc, run, stepId);
  return { run, stepId };
}

describe('index entries from step events', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  it('writes reports/{reportId} once: a duplicated event and a replay create nothing new', async () => {
    const index = new RecordingIndex();
    orc = await startTestOrchestrator({ reportIndex: index });
    const o = orc;
    const { run, stepId } = await reportFinished(o);
    const reportId = reportIdFor(run.runId, stepId);
    await expect.poll(() => index.creates).toEqual(['created']);
    expect(await index.getReport(reportId)).toMatchObject({
      reportId,
      runId: run.runId,
      stepId,
      ownerId: run.ownerId,
      symbolKey: 'BTCUSDT',
      timeframe: '1M',
      asOf: new Date(run.scope.asOf ?? run.createdAt).toISOString(),
    });
    expect(o.logs.withEvent('index_entry_created')).toHaveLength(1);

    // At-least-once delivery: the same event again.
    await publishStepEvent(o.broker, {
      runId: run.runId,
      stepId,
      stepType: 'LLM_REPORT',
      status: 'SUCCEEDED',
      attempt: 1,
      at: o.clock.now().toISOString(),
    });
    await expect.poll(() => ackedFor(o, stepId).length).toBe(2);
    expect(ackedFor(o, stepId)[1]).toMatchObject({ outcome: 'noop' });

    // Replay: seek the step-events subscription back; every retained event comes again.
    const acked = o.logs.withEvent('message_acked').length;
    const replay = await o.request('POST', '/admin/replay', {
      body: {
        subscription: EVENTS_SUB,
        time: new Date(o.clock.now().getTime() - 3_600_000).toISOString(),
      },
    });
    expect(replay.body).toMatchObject({ seeked: true });
    await expect.poll(() => ackedFor(o, stepId).length).toBeGreaterThanOrEqual(4);
    await expect.poll(() => o.logs.withEvent('message_acked').length).toBeGreaterThan(acked + 3);

    expect(index.creates).toEqual(['created']);
    expect(o.logs.withEvent('index_entry_created')).toHaveLength(1);
    expect(o.logs.withEvent('index_entry_exists').length).toBeGreaterThanOrEqual(3);
    expect((await index.listReports({ ownerId: run.ownerId, limit: 10 })).reports).toHaveLength(1);
  });

  it('nacks when the entry cannot be written, and writes it on the redelivery', async () => {
    const index = new RecordingIndex();
    index.failNextCreates = 1;
    orc = await startTestOrchestrator({ reportIndex: index });
    const o = orc;
    const { run, stepId } = await reportFinished(o);
    await expect.poll(() => o.logs.withEvent('message_handler_failed').length).toBe(1);
    expect(o.logs.withEvent('message_handler_failed')[0]).toMatchObject({ action: 'nack' });
    // The advance was written before the index failed, so the run moved on regardless.
    const after = await o.store.get(run.runId);
    expect(after?.run.steps[stepId]?.status).toBe('SUCCEEDED');

    await expect.poll(() => index.creates, { timeout: 5_000 }).toEqual(['created']);
    await expect.poll(() => ackedFor(o, stepId).length).toBe(1);
    expect(ackedFor(o, stepId)[0]).toMatchObject({
      outcome: 'processed',
      deliveryAttempt: 2,
    });
    expect(await index.getReport(reportIdFor(run.runId, stepId))).not.toBeNull();
  });
});
