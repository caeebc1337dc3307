import { rejectionOf } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidScheduleListQueryError,
  InvalidSignalError,
  InvalidStoredDocumentError,
  SignalNotFoundError,
} from '../schedule-store.errors';
import type { SignalStore } from '../signal-store.port';
import { makeSignal, scheduleIdOf } from './schedule.fixtures';

export interface SignalStoreHandle {
  store: SignalStore;
  cleanup: () => Promise<void>;
  /** Writes a document to the backing storage without validation, as a foreign writer could. */
  seedRawDocument: (signalId: string, doc: Record<string, unknown>) => Promise<void>;
}

/**
 * The semantics every SignalStore adapter shares (signal-store.port.ts), run against the
 * in-memory adapter in a unit spec and against Firestore on the emulator in an int-spec.
 */
export function describeSignalStoreConformance(
  name: string,
  open: () => Promise<SignalStoreHandle>,
): void {
  describe(`SignalStore conformance: ${name}`, () => {
    let handle: SignalStoreHandle;
    beforeEach(async () => {
      handle = await open();
    });
    afterEach(async () => {
      await handle.cleanup();
    });

    it('createOnce creates once; a replay with other contents is "exists" and changes nothing', async () => {
      const signal = makeSignal();
      expect(await handle.store.createOnce(signal)).toBe('created');
      expect(await handle.store.get(signal.signalId)).toEqual(signal);
      const replay = { ...signal, createdAt: '2026-03-02T00:00:00.000Z', signal_strength: 0.9 };
      expect(await handle.store.createOnce(replay)).toBe('exists');
      expect(await handle.store.get(signal.signalId)).toEqual(signal);
    });

    it('two emitters at once: one "created", one "exists"', async () => {
      const signal = makeSignal();
      const outcomes = await Promise.all([
        handle.store.createOnce(signal),
        handle.store.createOnce(signal),
      ]);
      expect(outcomes.sort()).toEqual(['created', 'exists']);
    });

    it.each([
      ['an invalid document', { signal_strength: 2 }],
      ['a malformed id', { signalId: 'sig_nope' }],
      ['a publishedAt (markPublished sets it)', { publishedAt: '2026-03-01T00:10:00.000Z' }],
    ] as const)('createOnce refuses %s and writes nothing', async (_case, overrides) => {
      const signal = { ...makeSignal(), ...overrides };
      expect(await rejectionOf(handle.store.createOnce(signal))).toBeInstanceOf(InvalidSignalError);
      expect(await handle.store.get(makeSignal().signalId)).toBeNull();
    });

    it('markPublished sets publishedAt once; the first time stays', async () => {
      const signal = makeSignal();
      await handle.store.createOnce(signal);
      const first = new Date('2026-03-01T00:09:42.000Z');
      expect(await handle.store.markPublished(signal.signalId, first)).toBe('marked');
      const again = new Date('2026-03-01T00:20:00.000Z');
      expect(await handle.store.markPublished(signal.signalId, again)).toBe('already_published');
      expect(await handle.store.get(signal.signalId)).toEqual({
        ...signal,
        publishedAt: '2026-03-01T00:09:42.000Z',
      });
      const missing = makeSignal({ slotAt: '2026-03-01T00:10:00.000Z' }).signalId;
      expect(await rejectionOf(handle.store.markPublished(missing, first))).toBeInstanceOf(
        SignalNotFoundError,
      );
      expect(await rejectionOf(handle.store.markPublished('bad', first))).toBeInstanceOf(
        SignalNotFoundError,
      );
    });

    it('two publishers marking at once: one "marked", one "already_published"', async () => {
      const signal = makeSignal();
      await handle.store.createOnce(signal);
      const outcomes = await Promise.all([
        handle.store.markPublished(signal.signalId, new Date('2026-03-01T00:09:42.000Z')),
        handle.store.markPublished(signal.signalId, new Date('2026-03-01T00:09:43.000Z')),
      ]);
      expect(outcomes.sort()).toEqual(['already_published', 'marked']);
    });

    it('get: unknown and malformed ids are null; extras tolerated; broken documents refused', async () => {
      expect(await handle.store.get(makeSignal().signalId)).toBeNull();
      expect(await handle.store.get('../x')).toBeNull();
      const extra = makeSignal({ slotAt: '2026-03-01T00:30:00.000Z' });
      await handle.seedRawDocument(extra.signalId, { ...extra, extra: true });
      expect(await handle.store.get(extra.signalId)).toMatchObject({ extra: true });
      const broken = makeSignal({ slotAt: '2026-03-01T00:35:00.000Z' }).signalId;
      await handle.seedRawDocument(broken, { signalId: broken });
      expect(await rejectionOf(handle.store.get(broken))).toBeInstanceOf(
        InvalidStoredDocumentError,
      );
    });

    it('list: one owner (and symbol), createdAt desc then id desc, keyset pages', async () => {
      const at = (minute: number) => `2026-03-01T01:${String(minute).padStart(2, '0')}:00.000Z`;
      const signals = [
        makeSignal({ slotAt: at(1), createdAt: at(1) }),
        makeSignal({ slotAt: at(2), createdAt: at(3) }),
        makeSignal({ slotAt: at(3), createdAt: at(3) }),
        makeSignal({ slotAt: at(4), createdAt: at(2), symbol: 'ETH-USDT', symbolKey: 'ETHUSDT' }),
        makeSignal({ slotAt: at(5), createdAt: at(5), ownerId: 'bob' }),
        makeSignal({ scheduleId: scheduleIdOf(2), slotAt: at(6), createdAt: at(6) }),
      ];
      for (const signal of signals) await handle.store.createOnce(signal);
      const tie = [signals[1], signals[2]]
        .map((s) => s?.signalId ?? '')
        .sort()
        .reverse();
      const expected = [signals[5]?.signalId, ...tie, signals[3]?.signalId, signals[0]?.signalId];
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 10; guard += 1) {
        const page = await handle.store.list({
          ownerId: 'alice',
          limit: 2,
          ...(cursor === undefined ? {} : { cursor }),
        });
        seen.push(...page.signals.map((s) => s.signalId));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      expect(seen).toEqual(expected);
      const eth = await handle.store.list({ ownerId: 'alice', symbolKey: 'ETHUSDT', limit: 10 });
      expect(eth).toEqual({ signals: [signals[3]], nextCursor: null });
      expect((await handle.store.list({ ownerId: 'bob', limit: 10 })).signals).toHaveLength(1);
    });

    it('list: a bad limit or a foreign cursor is InvalidScheduleListQueryError', async () => {
      for (const query of [
        { ownerId: 'alice', limit: 0 },
        { ownerId: 'alice', limit: 5, cursor: 'nope' },
      ]) {
        expect(await rejectionOf(handle.store.list(query))).toBeInstanceOf(
          InvalidScheduleListQueryError,
        );
      }
    });
  });
}
