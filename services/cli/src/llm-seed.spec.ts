import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_PROMPTS, DEFAULT_SCHEMAS, InMemoryPromptRegistry } from '@tda/llm';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli';
import { resolveFirestoreTarget } from './cli-config';
import { renderSeedTable, seedLlmRegistry } from './llm-seed';

const PROMPT_IDS = DEFAULT_PROMPTS.map((p) => p.promptId);
const SCHEMA_IDS = DEFAULT_SCHEMAS.map((s) => s.schemaId);
const [FIRST_PROMPT] = DEFAULT_PROMPTS;

describe('seedLlmRegistry', () => {
  it('creates what is missing, then keeps everything; a dry run writes nothing', async () => {
    const registry = new InMemoryPromptRegistry();
    const planned = await seedLlmRegistry(registry, { force: false, dryRun: true });
    expect(planned.map((r) => [r.kind, r.id, r.action])).toEqual([
      ...PROMPT_IDS.map((id) => ['prompt', id, 'would-create']),
      ...SCHEMA_IDS.map((id) => ['schema', id, 'would-create']),
    ]);
    for (const id of PROMPT_IDS) expect(await registry.getPrompt(id)).toBeNull();

    const created = await seedLlmRegistry(registry, { force: false, dryRun: false });
    expect(created.every((r) => r.action === 'created')).toBe(true);
    expect(created).toHaveLength(PROMPT_IDS.length + SCHEMA_IDS.length);
    const again = await seedLlmRegistry(registry, { force: false, dryRun: false });
    expect(again.every((r) => r.action === 'kept' && r.note === 'same content')).toBe(true);
  });

  it('keeps a differing document unless --force, which replaces it (dry run: would-replace)', async () => {
    if (FIRST_PROMPT === undefined) throw new Error('no default prompt');
    const registry = new InMemoryPromptRegistry();
    await seedLlmRegistry(registry, { force: false, dryRun: false });
    const edited = { ...FIRST_PROMPT, userPrompt: 'edited by hand' };
    await registry.savePrompt(edited, 'overwrite');

    const kept = await seedLlmRegistry(registry, { force: false, dryRun: false });
    expect(kept.find((r) => r.id === FIRST_PROMPT.promptId)).toEqual({
      kind: 'prompt',
      id: FIRST_PROMPT.promptId,
      action: 'kept',
      note: 'differs from the seed; --force replaces it',
    });
    expect((await registry.getPrompt(FIRST_PROMPT.promptId))?.userPrompt).toBe('edited by hand');

    const plan = await seedLlmRegistry(registry, { force: true, dryRun: true });
    expect(plan.find((r) => r.id === FIRST_PROMPT.promptId)?.action).toBe('would-replace');
    expect((await registry.getPrompt(FIRST_PROMPT.promptId))?.userPrompt).toBe('edited by hand');

    const forced = await seedLlmRegistry(registry, { force: true, dryRun: false });
    expect(forced.filter((r) => r.action === 'replaced').map((r) => r.id)).toEqual([
      FIRST_PROMPT.promptId,
    ]);
    expect((await registry.getPrompt(FIRST_PROMPT.promptId))?.userPrompt).toBe(
      FIRST_PROMPT.userPrompt,
    );
  });

  it('reports a contract-breaking document as kept, and --force repairs it', async () => {
    const registry = new InMemoryPromptRegistry();
    const [schemaId] = SCHEMA_IDS;
    if (schemaId === undefined) throw new Error('no default schema');
    registry.putRawDocument('schemas', schemaId, { schemaId, broken: true });
    const kept = await seedLlmRegistry(registry, { force: false, dryRun: false });
    expect(kept.find((r) => r.id === schemaId)).toMatchObject({
      action: 'kept',
      note: 'breaks its contract; --force replaces it',
    });
    const forced = await seedLlmRegistry(registry, { force: true, dryRun: false });
    expect(forced.find((r) => r.id === schemaId)).toMatchObject({ action: 'replaced' });
    expect((await registry.getSchema(schemaId))?.schemaId).toBe(schemaId);
  });
});

describe('renderSeedTable', () => {
  it('aligns kind, id, action and note, then sums up', () => {
    const lines = renderSeedTable(
      [
        { kind: 'prompt', id: 'prompt_month_v1', action: 'created', note: '' },
        { kind: 'schema', id: 'llm_report_output_v1', action: 'kept', note: 'same content' },
      ],
      false,
    );
    expect(lines).toEqual([
      'KIND    ID                    ACTION   NOTE',
      'prompt  prompt_month_v1       created',
      'schema  llm_report_output_v1  kept     same content',
      '',
      '1 created, 1 kept',
    ]);
    expect(
      renderSeedTable([{ kind: 'prompt', id: 'a_v1', action: 'would-create', note: '' }], true).at(
        -1,
      ),
    ).toBe('dry run, nothing written: 1 would-create');
  });
});

describe('resolveFirestoreTarget', () => {
  it('takes --project over GOOGLE_CLOUD_PROJECT and the emulator from FIRESTORE_EMULATOR_HOST', () => {
    const env = { GOOGLE_CLOUD_PROJECT: 'from-env', FIRESTORE_EMULATOR_HOST: '127.0.0.1:8681' };
    expect(resolveFirestoreTarget(env, { project: 'from-flag' })).toEqual({
      projectId: 'from-flag',
      emulatorHost: '127.0.0.1:8681',
    });
    expect(resolveFirestoreTarget({ GOOGLE_CLOUD_PROJECT: 'p1' })).toEqual({ projectId: 'p1' });
  });

  it('has no default project and rejects a malformed emulator host', () => {
    expect(() => resolveFirestoreTarget({})).toThrow(/--project <id> or set GOOGLE_CLOUD_PROJECT/);
    expect(() =>
      resolveFirestoreTarget({ GOOGLE_CLOUD_PROJECT: 'p', FIRESTORE_EMULATOR_HOST: 'nope' }),
    ).toThrow(/FIRESTORE_EMULATOR_HOST/);
  });
});

describe('tda llm seed', () => {
  it('without a project exits 1 and says how to name one (before touching Firestore)', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['llm', 'seed', '--dry-run'], {
      stdout: { write: (t: string) => out.push(t) > 0 },
      stderr: { write: (t: string) => err.push(t) > 0 },
      target: () => {
        throw new Error('tda llm seed must not need the API');
      },
      env: {},
    });
    expect(code).toBe(1);
    expect(err.join('')).toBe(
      'error INVALID_REQUEST: no Google Cloud project: pass --project <id> or set GOOGLE_CLOUD_PROJECT\n',
    );
    expect(out).toEqual([]);
  });

  it('without Google credentials: one `error UNAUTHENTICATED` line with what to do, exit 1 (the real CLI)', async () => {
    // A home without gcloud's ADC file, no key file, no emulator, and no metadata server lookup
    // (METADATA_SERVER_DETECTION=none: the answer must not depend on the machine's network).
    const home = mkdtempSync(join(tmpdir(), 'tda-no-adc-'));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: home,
      CLOUDSDK_CONFIG: home,
      METADATA_SERVER_DETECTION: 'none',
    };
    const bin = resolve(__dirname, '../bin/tda.js');
    const child = spawn(process.execPath, [bin, 'llm', 'seed', '--project', 'x'], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    rmSync(home, { recursive: true, force: true });
    expect({ code, stdout }).toEqual({
      code: 1,
      stdout: 'Firestore project x (Google Cloud, Application Default Credentials)\n',
    });
    expect(stderr.split('\n')).toEqual([expect.stringMatching(/^error UNAUTHENTICATED: /), '']);
    for (const hint of [
      'gcloud auth application-default login',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'FIRESTORE_EMULATOR_HOST',
    ]) {
      expect(stderr).toContain(hint);
    }
  });
});
