import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FlowRunStore } from '../flow-run-store.port';
import type { StepCheckpointStore } from '../step-checkpoint.port';
import { makeFlowRun } from './flow-run.fixtures';

export interface CheckpointStoreHandle {
  store: FlowRunStore & StepCheckpointStore;
  cleanup: () => Promise<void>;
}

/**
 * The semantics every StepCheckpointStore adapter shares (step-checkpoint.port.ts), run against
 * the in-memory adapter in a unit spec and against Firestore on the emulator in an int-spec.
 */
export function describeStepCheckpointConformance(
  name: string,
  open: () => Promise<CheckpointStoreHandle>,
): void {
  describe(`StepCheckpointStore conformance: ${name}`, () => {
    let handle: CheckpointStoreHandle;
    beforeEach(async () => {
      handle = await open();
    });
    afterEach(async () => {
      await handle.cleanup();
    });

    it('writes when the guard holds for the stored run, and replaces the whole document', async () => {
      const { run } = await handle.store.create(makeFlowRun({ suffix: 'ckp' }));
      const seen: string[] = [];
      const guard = (stored: typeof run) => {
        seen.push(stored.runId);
        return true;
      };
      expect(await handle.store.writeCheckpoint(run.runId, 's:1', { a: 1, b: [1] }, guard)).toBe(
        'written',
      );
      expect(await handle.store.writeCheckpoint(run.runId, 's:1', { b: [2] }, guard)).toBe(
        'written',
      );
      expect(await handle.store.readCheckpoint(run.runId, 's:1')).toEqual({ b: [2] });
      expect(await handle.store.readCheckpoint(run.runId, 's:2')).toBeNull();
      expect(seen).toEqual([run.runId, run.runId]);
    });

    it('refuses (writes nothing) when the guard fails or the run does not exist', async () => {
      const { run } = await handle.store.create(makeFlowRun({ suffix: 'ckq' }));
      await handle.store.writeCheckpoint(run.runId, 's', { v: 1 }, () => true);
      expect(await handle.store.writeCheckpoint(run.runId, 's', { v: 2 }, () => false)).toBe(
        'refused',
      );
      expect(await handle.store.readCheckpoint(run.runId, 's')).toEqual({ v: 1 });
      const missing = makeFlowRun({ suffix: 'zzz' }).runId;
      expect(await handle.store.writeCheckpoint(missing, 's', { v: 1 }, () => true)).toBe(
        'refused',
      );
      expect(await handle.store.writeCheckpoint('not a run id', 's', {}, () => true)).toBe(
        'refused',
      );
      expect(await handle.store.readCheckpoint(missing, 's')).toBeNull();
    });

    it('the guard sees the current run document (a write after a lease change is refused)', async () => {
      const created = await handle.store.create(makeFlowRun({ suffix: 'ckr' }));
      const { runId } = created.run;
      const ownedBy = (owner: string) => (run: typeof created.run) => run.ownerId === owner;
      const before = created.run.ownerId;
      expect(await handle.store.writeCheckpoint(runId, 's', { v: 1 }, ownedBy(before))).toBe(
        'written',
      );
      await handle.store.update(runId, { ownerId: 'someone-else' }, created.version);
      expect(await handle.store.writeCheckpoint(runId, 's', { v: 2 }, ownedBy(before))).toBe(
        'refused',
      );
      expect(await handle.store.readCheckpoint(runId, 's')).toEqual({ v: 1 });
    });
  });
}
