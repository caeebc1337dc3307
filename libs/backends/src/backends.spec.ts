import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tda/config';
import { makeFlowRun } from '@tda/flow-store/testing';
import { makeReportEntry } from '@tda/report-index/testing';
import { stepReadySubscription, stepReadyTopic } from '@tda/messaging';
import { expectEventually } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { backendConfigSchema } from './backend-config';
import { createBackends } from './backends';

describe('createBackends (memory)', () => {
  it('wires a working store, broker with the topology, and local artifacts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tda-backends-'));
    const config = loadConfig('test', backendConfigSchema, { TDA_DATA_DIR: dataDir });
    const backends = await createBackends(config);
    try {
      expect(backends.mode).toBe('memory');
      const run = makeFlowRun();
      await backends.store.create(run);
      expect((await backends.store.get(run.runId))?.run.runId).toBe(run.runId);
      const report = makeReportEntry();
      expect(await backends.reportIndex.createReport(report)).toBe('created');
      expect(await backends.reportIndex.getReport(report.reportId)).toEqual(report);

      const received: string[] = [];
      const sub = await backends.broker.subscribe(
        stepReadySubscription('OHLCV_EXPORT'),
        (m) => {
          received.push(m.data.toString());
          m.ack();
        },
        { maxInFlight: 4 },
      );
      await backends.broker.publish(stepReadyTopic('OHLCV_EXPORT'), {
        data: { hello: 1 },
        attributes: {},
      });
      await expectEventually(() => expect(received).toEqual(['{"hello":1}']));
      await sub.close();

      const put = await backends.artifacts.put(
        'gs://tda-artifacts/runs/x.json',
        Buffer.from('{}'),
        {
          contentType: 'application/json',
        },
      );
      expect(put.created).toBe(true);
      expect(backends.describe().join('\n')).toContain(dataDir);
    } finally {
      await backends.close();
    }
  });

  it('refuses to apply the plain topology to GCP (tda infra apply owns it)', async () => {
    const config = loadConfig('test', backendConfigSchema, { TDA_BACKEND: 'gcp' });
    await expect(createBackends(config, { applyTopology: true })).rejects.toThrow(
      /tda infra apply/,
    );
  });

  it('rejects an invalid bucket name at config time', () => {
    expect(() =>
      loadConfig('test', backendConfigSchema, { TDA_ARTIFACTS_BUCKET: 'Bad_Bucket!' }),
    ).toThrow(/TDA_ARTIFACTS_BUCKET/);
  });
});
