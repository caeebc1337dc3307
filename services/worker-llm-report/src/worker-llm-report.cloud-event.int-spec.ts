import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '@tda/contracts';
import { createMemoryLogger } from '@tda/observability';
import { emulatorEndpoints } from '@tda/test-support';
import { CLOUD_EVENTS_PATH } from '@tda/worker-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowFixture, REPORT_1W } from './testing/llm-report.fixtures';
import {
  bootstrapLlmReportWorker,
  type LlmReportWorkerHandle,
} from './worker-llm-report.bootstrap';

const UPDATED = 'google.cloud.firestore.document.v1.updated';

/**
 * seed 002 ingress on the real Firestore emulator: the booted worker (emulators backend, offline
 * analyst) receives Eventarc-shaped binary CloudEvents on POST /cloudevents.
 */
describe('LLM_REPORT worker: Firestore CloudEvent ingress (emulators)', () => {
  const log = createMemoryLogger();
  let handle: LlmReportWorkerHandle;
  let dataDir: string;
  let seeded = 0;

  beforeAll(async () => {
    const { firestoreHost, pubsubHost, projectId } = emulatorEndpoints();
    dataDir = await mkdtemp(join(tmpdir(), 'tda-llm-ce-'));
    handle = await bootstrapLlmReportWorker({
      env: {
        TDA_BACKEND: 'emulators',
        GOOGLE_CLOUD_PROJECT: projectId,
        FIRESTORE_EMULATOR_HOST: firestoreHost,
        PUBSUB_EMULATOR_HOST: pubsubHost,
        TDA_DATA_DIR: dataDir,
        TDA_PUBSUB_PREFIX: `tce${Date.now().toString(36)}`,
        PORT: '0',
      },
      logger: log.logger,
    });
  }, 60_000);

  afterAll(async () => {
    await handle.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** A flow-1 run with the 1w report READY, its upstream artifacts in the worker's store. */
  async function seedRun() {
    // A distinct creation time per call gives a distinct runId in the shared emulator.
    seeded += 1;
    const fixture = await flowFixture(
      new Date(Math.floor(Date.now() / 1000) * 1000 + seeded * 1000),
    );
    for (const uri of fixture.artifacts.list()) {
      const contentType = fixture.artifacts.contentTypeOf(uri) ?? 'application/json';
      await handle.backends.artifacts.put(uri, await fixture.artifacts.read(uri), { contentType });
    }
    const created = await handle.backends.store.create(fixture.run);
    return { ...fixture, version: created.version };
  }

  const post = (subject: string, id = 'evt-1') =>
    fetch(`http://127.0.0.1:${handle.health.port}${CLOUD_EVENTS_PATH}`, {
      method: 'POST',
      headers: {
        'ce-specversion': '1.0',
        'ce-id': id,
        'ce-source': '//firestore.googleapis.com/projects/p/databases/(default)',
        'ce-type': UPDATED,
        'ce-subject': subject,
        'content-type': 'application/protobuf',
      },
      body: Buffer.from([0x0a, 0x00]),
    });

  it('executes the READY report step named by the event subject and finalizes it', async () => {
    const fixture = await seedRun();
    const response = await post(`documents/flow_runs/${fixture.run.runId}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      kind: 'dispatched',
      runId: fixture.run.runId,
      stepId: REPORT_1W,
      harness: { kind: 'executed', status: 'SUCCEEDED' },
    });
    const step = (await handle.backends.store.get(fixture.run.runId))?.run.steps[REPORT_1W];
    expect(step?.status).toBe('SUCCEEDED');
    expect(step?.outputs['gcs_uri']).toBe(fixture.reportUri);
    const file = await handle.backends.artifacts.read(fixture.reportUri);
    const parsed = validate.llmReportFile(JSON.parse(file.toString('utf8')));
    expect(parsed.ok ? parsed.value.metadata.stepId : parsed.issues).toBe(REPORT_1W);

    // The same event again (Eventarc at-least-once): nothing executable, nothing written.
    const before = await handle.backends.store.get(fixture.run.runId);
    const again = await post(`documents/flow_runs/${fixture.run.runId}`);
    expect(await again.json()).toEqual({
      kind: 'noop',
      reason: 'no_executable_step',
      runId: fixture.run.runId,
    });
    expect((await handle.backends.store.get(fixture.run.runId))?.version).toBe(before?.version);
  });

  it('ignores an invalid subject (cloud_event_ignored reason=invalid_subject) without writing', async () => {
    const fixture = await seedRun();
    const response = await post(`documents/flow_runs/${fixture.run.runId.toUpperCase()}`, 'e2');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ kind: 'ignored', reason: 'invalid_subject' });
    const after = await handle.backends.store.get(fixture.run.runId);
    expect(after?.version).toBe(fixture.version);
    expect(after?.run.steps[REPORT_1W]?.status).toBe('READY');
    expect(log.withEvent('cloud_event_ignored').at(-1)).toMatchObject({
      reason: 'invalid_subject',
      eventType: UPDATED,
    });
  });
});
