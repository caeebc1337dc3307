import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tda/config';
import { makeFlowRun } from '@tda/flow-store/testing';
import { stepEventsSubscription, stepEventsTopic } from '@tda/messaging';
import { emulatorEndpoints, expectEventually } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { backendConfigSchema } from './backend-config';
import { createBackends } from './backends';

describe('createBackends (emulators)', () => {
  it('applies the topology and round-trips a run and a message through the emulators', async () => {
    const { firestoreHost, pubsubHost, projectId } = emulatorEndpoints();
    const prefix = `tb${Date.now().toString(36)}`;
    const config = loadConfig('test', backendConfigSchema, {
      TDA_BACKEND: 'emulators',
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: firestoreHost,
      PUBSUB_EMULATOR_HOST: pubsubHost,
      TDA_DATA_DIR: mkdtempSync(join(tmpdir(), 'tda-backends-')),
      TDA_PUBSUB_PREFIX: prefix,
    });
    const backends = await createBackends(config);
    try {
      const run = makeFlowRun({ suffix: Math.random().toString(36).slice(2, 7) });
      await backends.store.create(run);
      expect((await backends.store.get(run.runId))?.run.status).toBe('RUNNING');

      const seen: string[] = [];
      const sub = await backends.broker.subscribe(
        stepEventsSubscription(prefix),
        (m) => {
          seen.push(m.attributes['k'] ?? '');
          m.ack();
        },
        { maxInFlight: 4 },
      );
      await backends.broker.publish(stepEventsTopic(prefix), { data: {}, attributes: { k: 'v' } });
      await expectEventually(() => expect(seen).toEqual(['v']), { timeoutMs: 20_000 });
      await sub.close();
    } finally {
      await backends.close();
    }
  });
});
