import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '@tda/flow-store';
import {
  DEFAULT_PROMPTS,
  DEFAULT_PROMPTS_COLLECTION,
  DEFAULT_SCHEMAS,
  DEFAULT_SCHEMAS_COLLECTION,
} from '@tda/llm';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';

const PROMPT_IDS = DEFAULT_PROMPTS.map((p) => p.promptId);
const SCHEMA_IDS = DEFAULT_SCHEMAS.map((s) => s.schemaId);
const ALL = PROMPT_IDS.length + SCHEMA_IDS.length;

/**
 * `tda llm seed` against the real Firestore emulator. Each test seeds its own project id: the
 * emulator keeps projects apart, so the default collection names (llm_prompts, llm_schemas) can
 * be used without seeing other tests' documents.
 */
describe('tda llm seed (Firestore emulator)', () => {
  const { firestoreHost } = emulatorEndpoints();
  let project = '';
  let firestore: Firestore;
  let out: string[] = [];
  let err: string[] = [];
  const io = (): CliIo => ({
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => {
      throw new Error('tda llm seed must not need the API');
    },
    env: { FIRESTORE_EMULATOR_HOST: firestoreHost },
  });
  const seed = async (...flags: string[]): Promise<{ code: number; rows: string[][] }> => {
    out = [];
    err = [];
    const code = await runCli(['llm', 'seed', '--project', project, ...flags], io());
    const lines = out.join('').split('\n');
    // table rows: "<kind>  <id>  <action>  <note>" for prompt/schema lines
    const rows = lines
      .filter((l) => /^(prompt|schema) /.test(l))
      .map((l) => l.split(/\s{2,}/).slice(0, 3));
    return { code, rows };
  };
  /** updateTime of every registry document, by collection/id (proves "no writes"). */
  const updateTimes = async (): Promise<Record<string, string>> => {
    const times: Record<string, string> = {};
    for (const collection of [DEFAULT_PROMPTS_COLLECTION, DEFAULT_SCHEMAS_COLLECTION]) {
      const snapshot = await firestore.collection(collection).get();
      for (const doc of snapshot.docs) {
        times[`${collection}/${doc.id}`] = doc.updateTime.toDate().toISOString();
      }
    }
    return times;
  };

  beforeEach(() => {
    project = uniqueName('tda-seed');
    firestore = createFirestore({ projectId: project, emulatorHost: firestoreHost });
  });
  afterEach(async () => {
    await firestore.terminate();
  });

  it('creates every default document, then keeps them all without writing', async () => {
    const first = await seed();
    expect(first.code).toBe(0);
    expect(err.join('')).toBe('');
    expect(out.join('')).toContain(`Firestore project ${project} (emulator ${firestoreHost})`);
    expect(first.rows).toEqual([
      ...PROMPT_IDS.map((id) => ['prompt', id, 'created']),
      ...SCHEMA_IDS.map((id) => ['schema', id, 'created']),
    ]);
    expect(out.join('')).toContain(`${ALL} created`);
    const stored = await firestore
      .collection(DEFAULT_PROMPTS_COLLECTION)
      .doc(PROMPT_IDS[0] ?? '')
      .get();
    expect(stored.data()).toMatchObject({ ...DEFAULT_PROMPTS[0], createdAt: expect.any(String) });

    const before = await updateTimes();
    expect(Object.keys(before)).toHaveLength(ALL);
    const second = await seed();
    expect(second.code).toBe(0);
    expect(second.rows.every(([, , action]) => action === 'kept')).toBe(true);
    expect(second.rows).toHaveLength(ALL);
    expect(out.join('')).toContain(`${ALL} kept`);
    expect(await updateTimes()).toEqual(before);
  });

  it('keeps a modified document; --force replaces it (keeping createdAt); --dry-run writes nothing', async () => {
    await seed();
    const id = PROMPT_IDS[0] ?? '';
    const ref = firestore.collection(DEFAULT_PROMPTS_COLLECTION).doc(id);
    await ref.update({ userPrompt: 'edited in the console' });
    const createdAt: unknown = (await ref.get()).get('createdAt');

    const kept = await seed();
    expect(kept.rows.find(([, rowId]) => rowId === id)).toEqual(['prompt', id, 'kept']);
    expect(out.join('')).toContain('differs from the seed; --force replaces it');
    expect((await ref.get()).get('userPrompt')).toBe('edited in the console');

    const before = await updateTimes();
    const planned = await seed('--force', '--dry-run');
    expect(planned.code).toBe(0);
    expect(planned.rows.find(([, rowId]) => rowId === id)).toEqual(['prompt', id, 'would-replace']);
    expect(out.join('')).toContain('dry run, nothing written: 1 would-replace');
    expect(await updateTimes()).toEqual(before);

    const forced = await seed('--force');
    expect(forced.code).toBe(0);
    expect(forced.rows.filter(([, , action]) => action === 'replaced')).toEqual([
      ['prompt', id, 'replaced'],
    ]);
    const replaced = await ref.get();
    expect(replaced.get('userPrompt')).toBe(DEFAULT_PROMPTS[0]?.userPrompt);
    expect(replaced.get('createdAt')).toBe(createdAt);
    expect(typeof replaced.get('updatedAt')).toBe('string');
    // only the replaced document was written
    const after = await updateTimes();
    for (const [key, time] of Object.entries(after)) {
      if (key === `${DEFAULT_PROMPTS_COLLECTION}/${id}`) expect(time).not.toBe(before[key]);
      else expect(time).toBe(before[key]);
    }
  });

  it('--dry-run on an empty project plans every create and writes nothing', async () => {
    const planned = await seed('--dry-run');
    expect(planned.code).toBe(0);
    expect(planned.rows).toEqual([
      ...PROMPT_IDS.map((id) => ['prompt', id, 'would-create']),
      ...SCHEMA_IDS.map((id) => ['schema', id, 'would-create']),
    ]);
    expect(await updateTimes()).toEqual({});
  });
});
