import type { FlowRun } from '@tda/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FlowRunStore } from '../flow-run-store.port';
import type { RunChangeFeed, RunFeedSubscription } from '../run-change-feed.port';
import { makeFlowRun } from './flow-run.fixtures';

export interface ChangeFeedHandle {
  store: FlowRunStore & RunChangeFeed;
  cleanup: () => Promise<void>;
}

const T0 = Date.parse('2026-09-20T00:00:00.000Z');

/** The semantics of RunChangeFeed (run-change-feed.port.ts), shared by both adapters. */
export function describeRunChangeFeedConformance(
  name: string,
  open: (clock: () => Date) => Promise<ChangeFeedHandle>,
): void {
  describe(`RunChangeFeed conformance: ${name}`, () => {
    let now = T0;
    let handle: ChangeFeedHandle;
    const subscriptions: RunFeedSubscription[] = [];
    const errors: Error[] = [];
    beforeEach(async () => {
      now = T0;
      handle = await open(() => new Date(now));
    });
    afterEach(async () => {
      for (const s of subscriptions.splice(0)) s.close();
      expect(errors).toEqual([]);
      await handle.cleanup();
    });
    const onError = (error: Error): void => {
      errors.push(error);
    };

    it('watchRun: the document now, then after each write; nothing after close', async () => {
      const run = makeFlowRun({ ownerId: 'alice' });
      const created = await handle.store.create(run);
      const seen: (FlowRun | null)[] = [];
      const sub = handle.store.watchRun(run.runId, (r) => seen.push(r), onError);
      subscriptions.push(sub);
      await expect.poll(() => seen.length).toBe(1);
      expect(seen[0]?.status).toBe(run.status);
      now += 1_000;
      await handle.store.update(run.runId, { status: 'CANCELLED' }, created.version);
      await expect.poll(() => seen.at(-1)?.status).toBe('CANCELLED');
      sub.close();
      const count = seen.length;
      const latest = await handle.store.get(run.runId);
      await handle.store.update(
        run.runId,
        { cancelRequestedAt: new Date(now).toISOString() },
        latest?.version ?? '',
      );
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toHaveLength(count);
    });

    it('watchRun of a missing run says null', async () => {
      const seen: (FlowRun | null)[] = [];
      subscriptions.push(
        handle.store.watchRun('20260920-000000_BTC-USDT_nope1', (r) => seen.push(r), onError),
      );
      await expect.poll(() => seen.length).toBe(1);
      expect(seen[0]).toBeNull();
    });

    it("watchOwner: only the owner's runs written since `since`, then each written run", async () => {
      const old = makeFlowRun({ ownerId: 'alice', runId: '20260920-000000_BTC-USDT_old01' });
      await handle.store.create(old);
      now += 60_000;
      const since = new Date(now).toISOString();
      const recent = makeFlowRun({ ownerId: 'alice', runId: '20260920-000100_BTC-USDT_new01' });
      await handle.store.create(recent);
      await handle.store.create(
        makeFlowRun({ ownerId: 'bob', runId: '20260920-000100_BTC-USDT_bob01' }),
      );
      const seen: string[] = [];
      subscriptions.push(
        handle.store.watchOwner(
          'alice',
          since,
          (runs) => seen.push(...runs.map((r) => r.runId)),
          onError,
        ),
      );
      await expect.poll(() => seen).toEqual([recent.runId]);
      now += 1_000;
      const current = await handle.store.get(old.runId);
      await handle.store.update(old.runId, { status: 'CANCELLED' }, current?.version ?? '');
      await expect.poll(() => seen).toEqual([recent.runId, old.runId]);
      await handle.store.create(
        makeFlowRun({ ownerId: 'bob', runId: '20260920-000200_BTC-USDT_bob02' }),
      );
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toEqual([recent.runId, old.runId]);
    });
  });
}
