import { ArtifactReadError, InMemoryArtifactStore, type ArtifactStore } from '@tda/artifacts';
import type { FlowRun } from '@tda/contracts';
import { recommendationIdFor, reportIdFor } from '@tda/flow-engine';
import { createMemoryLogger } from '@tda/observability';
import {
  InMemoryReportIndexStore,
  IndexStoreUnavailableError,
  InvalidIndexEntryError,
  type ReportIndexStore,
} from '@tda/report-index';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import {
  artifactUriOf,
  RECO_STEP,
  recommendationFileFor,
  REPORT_STEP,
  reportFileFor,
  runWithLlmSteps,
} from '../testing/index.fixtures';
import { IndexWriter } from './index-writer.service';

const CANARY = 'CANARY-model-text-7f3a';

/** An artifact store that counts reads and can fail them. */
class CountingArtifacts {
  reads = 0;
  failWith: Error | undefined;
  readonly inner = new InMemoryArtifactStore();

  read(uri: string): Promise<Buffer> {
    this.reads += 1;
    if (this.failWith !== undefined) return Promise.reject(this.failWith);
    return this.inner.read(uri);
  }

  async putJson(uri: string, value: unknown): Promise<void> {
    await this.inner.put(uri, Buffer.from(JSON.stringify(value)), {
      contentType: 'application/json',
    });
  }
}

async function setup(index: ReportIndexStore = new InMemoryReportIndexStore()) {
  const artifacts = new CountingArtifacts();
  const logs = createMemoryLogger({ service: 'test', level: 'debug' });
  const writer = new IndexWriter(
    index,
    artifacts as unknown as Pick<ArtifactStore, 'read'>,
    { TDA_ARTIFACTS_BUCKET: 'tda-artifacts' },
    logs.logger,
  );
  const run = runWithLlmSteps();
  await artifacts.putJson(
    artifactUriOf(run.runId, REPORT_STEP),
    reportFileFor(run.runId, REPORT_STEP, `# ${CANARY}`),
  );
  await artifacts.putJson(
    artifactUriOf(run.runId, RECO_STEP),
    recommendationFileFor(run.runId, RECO_STEP),
  );
  return { writer, artifacts, logs, run, index };
}

describe('IndexWriter', () => {
  it('creates the report entry once; the next call finds it without reading the artifact', async () => {
    const { writer, artifacts, logs, run, index } = await setup();
    const reportId = reportIdFor(run.runId, REPORT_STEP);
    expect(await writer.indexStep(run, REPORT_STEP)).toEqual({
      outcome: 'created',
      kind: 'report',
      id: reportId,
      runId: run.runId,
      stepId: REPORT_STEP,
    });
    expect(await index.getReport(reportId)).toMatchObject({ reportId, ownerId: 'alice' });
    expect(artifacts.reads).toBe(1);
    expect(await writer.indexStep(run, REPORT_STEP)).toMatchObject({
      outcome: 'exists',
      id: reportId,
    });
    expect(artifacts.reads).toBe(1);
    expect(logs.withEvent('index_entry_created')).toHaveLength(1);
    expect(logs.withEvent('index_entry_exists')).toHaveLength(1);
  });

  it('creates the recommendation entry', async () => {
    const { writer, run, index } = await setup();
    const outcome = await writer.indexStep(run, RECO_STEP);
    expect(outcome).toMatchObject({ outcome: 'created', kind: 'recommendation' });
    const entry = await index.getRecommendation(recommendationIdFor(run.runId, RECO_STEP));
    expect(entry?.reportIds).toEqual([reportIdFor(run.runId, REPORT_STEP)]);
  });

  it('answers exists when another writer created the entry between its check and its create', async () => {
    const inner = new InMemoryReportIndexStore();
    const racing: ReportIndexStore = {
      ...bind(inner),
      getReport: () => Promise.resolve(null),
    };
    const { writer, run } = await setup(racing);
    expect((await writer.indexStep(run, REPORT_STEP)).outcome).toBe('created');
    expect((await writer.indexStep(run, REPORT_STEP)).outcome).toBe('exists');
  });

  it('skips an artifact that breaks its contract, with schema paths only in the log', async () => {
    const { writer, artifacts, logs, run, index } = await setup();
    const file = reportFileFor(run.runId, REPORT_STEP, `# ${CANARY}`);
    const broken = { ...file, output: { details: {} } };
    const brokenRun = withStep(run, 'llm_report:1d:bad', REPORT_STEP);
    await artifacts.putJson(artifactUriOf(run.runId, 'llm_report:1d:bad'), broken);
    const outcome = await writer.indexStep(brokenRun, 'llm_report:1d:bad');
    expect(outcome).toMatchObject({ outcome: 'unreadable', reason: 'invalid_artifact' });
    expect(await index.listReports({ ownerId: 'alice', limit: 10 })).toEqual({
      reports: [],
      nextCursor: null,
    });
    const skipped = logs.withEvent('index_entry_skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ reason: 'invalid_artifact', issues: ['/output'] });
    expect(JSON.stringify(logs.records)).not.toContain(CANARY);
  });

  it.each([
    ['missing', (r: FlowRun) => withStep(r, 'llm_report:1d:gone', REPORT_STEP)],
    [
      'foreign_bucket',
      (r: FlowRun) => withStep(r, REPORT_STEP, REPORT_STEP, 'gs://other-bucket/x.json'),
    ],
  ])('skips an artifact that is %s', async (reason, edit) => {
    const { writer, run } = await setup();
    const changed = edit(run);
    const stepId = Object.keys(changed.steps).find((id) => id.includes('gone')) ?? REPORT_STEP;
    expect(await writer.indexStep(changed, stepId)).toMatchObject({
      outcome: 'unreadable',
      reason,
    });
  });

  it('skips the file of another step (a copied or misplaced artifact)', async () => {
    const { writer, artifacts, run } = await setup();
    const other = withStep(run, 'llm_report:1w:x', REPORT_STEP);
    await artifacts.putJson(
      artifactUriOf(run.runId, 'llm_report:1w:x'),
      reportFileFor(run.runId, REPORT_STEP),
    );
    expect(await writer.indexStep(other, 'llm_report:1w:x')).toMatchObject({
      outcome: 'unreadable',
      reason: 'other_step',
    });
  });

  it('throws on a storage or index outage (the step-event handler nacks)', async () => {
    const { writer, artifacts, run } = await setup();
    artifacts.failWith = new ArtifactReadError(artifactUriOf(run.runId, REPORT_STEP), 'timeout');
    expect(await rejectionOf(writer.indexStep(run, REPORT_STEP))).toBeInstanceOf(ArtifactReadError);

    const down = new IndexStoreUnavailableError('createReport', 'UNAVAILABLE', new Error('x'));
    const failing: ReportIndexStore = {
      ...bind(new InMemoryReportIndexStore()),
      createReport: () => Promise.reject(down),
    };
    const second = await setup(failing);
    expect(await rejectionOf(second.writer.indexStep(second.run, REPORT_STEP))).toBe(down);
  });

  it('skips (and logs at error level) an entry its contract refuses: a builder bug no retry fixes', async () => {
    const refusing: ReportIndexStore = {
      ...bind(new InMemoryReportIndexStore()),
      createReport: (entry) =>
        Promise.reject(
          new InvalidIndexEntryError('report', entry.reportId, [
            { path: '/headline', keyword: 'maxLength', message: `'${CANARY}' is too long` },
          ]),
        ),
    };
    const { writer, run, logs } = await setup(refusing);
    expect(await writer.indexStep(run, REPORT_STEP)).toMatchObject({
      outcome: 'unreadable',
      reason: 'invalid_entry',
    });
    expect(logs.withEvent('index_entry_skipped')[0]).toMatchObject({
      severity: 'ERROR',
      issues: ['/headline (maxLength)'],
    });
    expect(JSON.stringify(logs.records)).not.toContain(CANARY);
  });

  it('does nothing for steps that are not finished LLM steps with an artifact', async () => {
    const { writer, artifacts, run } = await setup();
    const step = run.steps[REPORT_STEP];
    if (step === undefined) throw new Error('fixture');
    const running = {
      ...run,
      steps: { ...run.steps, [REPORT_STEP]: { ...step, status: 'RUNNING' as const } },
    };
    const noUri = { ...run, steps: { ...run.steps, [REPORT_STEP]: { ...step, outputs: {} } } };
    expect(await writer.indexStep(run, 'ohlcv_export:1d')).toMatchObject({
      outcome: 'not_indexable',
    });
    expect(await writer.indexStep(run, 'no-such-step')).toMatchObject({ outcome: 'not_indexable' });
    expect(await writer.indexStep(running, REPORT_STEP)).toMatchObject({
      reason: 'step is RUNNING',
    });
    expect(await writer.indexStep(noUri, REPORT_STEP)).toMatchObject({ reason: 'no artifact' });
    expect(artifacts.reads).toBe(0);
  });

  it('dry run: reads and builds, writes nothing', async () => {
    const { writer, run, index } = await setup();
    expect(await writer.indexStep(run, REPORT_STEP, { dryRun: true })).toMatchObject({
      outcome: 'would_create',
    });
    expect(await index.getReport(reportIdFor(run.runId, REPORT_STEP))).toBeNull();
  });
});

/** The store's methods bound, so an object spread keeps them working. */
function bind(store: ReportIndexStore): ReportIndexStore {
  return {
    createReport: (e) => store.createReport(e),
    createRecommendation: (e) => store.createRecommendation(e),
    getReport: (id) => store.getReport(id),
    getRecommendation: (id) => store.getRecommendation(id),
    listReports: (q) => store.listReports(q),
    listRecommendations: (q) => store.listRecommendations(q),
  };
}

/** `run` with a SUCCEEDED LLM step `stepId` shaped like `like`, its artifact at `uri`. */
function withStep(
  run: FlowRun,
  stepId: string,
  like: string,
  uri = artifactUriOf(run.runId, stepId),
): FlowRun {
  const template = run.steps[like];
  if (template === undefined) throw new Error('fixture');
  return { ...run, steps: { ...run.steps, [stepId]: { ...template, outputs: { gcs_uri: uri } } } };
}
