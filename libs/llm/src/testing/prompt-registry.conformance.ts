import type { LlmPrompt, LlmSchema } from '@tda/contracts';
import { rejectionOf } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PROMPTS, DEFAULT_SCHEMAS, defaultReportSchema } from '../default-registry';
import { RegistryDocumentInvalidError } from '../llm.errors';
import { computeSchemaSha256 } from '../output-schema';
import type { PromptRegistry, PromptRegistryWriter } from '../prompt-registry.port';
import { seedRegistry } from '../seed-registry';

export interface PromptRegistryConformanceHandle {
  registry: PromptRegistry & PromptRegistryWriter;
  /** Stores a document as is (no validation), as an admin console could. */
  putRawDocument(collection: 'prompts' | 'schemas', id: string, data: unknown): Promise<void>;
  cleanup?: () => Promise<void>;
}

function prompt(overrides: Partial<LlmPrompt> = {}): LlmPrompt {
  return {
    promptId: 'prompt_test_v1',
    version: 1,
    systemInstruction: 'You are a test analyst.',
    userPrompt: 'Write the test report.',
    ...overrides,
  };
}

/**
 * The behaviour every PromptRegistry adapter shares: lookups, contract validation of stored
 * documents (with sanitized issues), create-only vs overwrite writes, and seeding. `open` is
 * called before each test and must give an empty registry.
 */
export function describePromptRegistryConformance(
  name: string,
  open: () => Promise<PromptRegistryConformanceHandle>,
): void {
  describe(`PromptRegistry conformance: ${name}`, () => {
    let handle: PromptRegistryConformanceHandle;

    beforeEach(async () => {
      handle = await open();
    });

    afterEach(async () => {
      await handle.cleanup?.();
    });

    it('returns null for unknown ids and for ids that cannot be document ids', async () => {
      expect(await handle.registry.getPrompt('prompt_missing_v1')).toBeNull();
      expect(await handle.registry.getSchema('llm_report_output_v9')).toBeNull();
      expect(await handle.registry.getPrompt('../etc/passwd')).toBeNull();
      expect(await handle.registry.getSchema('a/b')).toBeNull();
      expect(await handle.registry.getPrompt('')).toBeNull();
    });

    it('round-trips a prompt and a schema', async () => {
      const doc = prompt({ description: 'test prompt', createdAt: '2026-01-01T00:00:00Z' });
      expect(await handle.registry.savePrompt(doc, 'create')).toEqual({ written: true });
      expect(await handle.registry.getPrompt(doc.promptId)).toEqual(doc);
      const schema = defaultReportSchema();
      expect(await handle.registry.saveSchema(schema, 'create')).toEqual({ written: true });
      expect(await handle.registry.getSchema(schema.schemaId)).toEqual(schema);
    });

    it('keeps the schema hash stable across the round trip (key order does not matter)', async () => {
      const schema = defaultReportSchema();
      await handle.registry.saveSchema(schema, 'create');
      const read = await handle.registry.getSchema(schema.schemaId);
      expect(read).not.toBeNull();
      expect(computeSchemaSha256(read?.jsonSchema ?? {})).toBe(
        computeSchemaSha256(schema.jsonSchema),
      );
    });

    it('create never replaces an existing document; overwrite does', async () => {
      await handle.registry.savePrompt(prompt(), 'create');
      const changed = prompt({ userPrompt: 'A different task.' });
      expect(await handle.registry.savePrompt(changed, 'create')).toEqual({ written: false });
      expect((await handle.registry.getPrompt('prompt_test_v1'))?.userPrompt).toBe(
        'Write the test report.',
      );
      expect(await handle.registry.savePrompt(changed, 'overwrite')).toEqual({ written: true });
      expect((await handle.registry.getPrompt('prompt_test_v1'))?.userPrompt).toBe(
        'A different task.',
      );
    });

    it('tolerates unknown extra fields of stored documents', async () => {
      await handle.putRawDocument('prompts', 'prompt_test_v1', { ...prompt(), owner: 'admin' });
      const read = await handle.registry.getPrompt('prompt_test_v1');
      expect(read?.['owner']).toBe('admin');
    });

    it('rejects a stored prompt that breaks the contract, without quoting its texts', async () => {
      const secret = 'SECRET-PROMPT-TEXT-7f3a';
      await handle.putRawDocument('prompts', 'prompt_test_v1', {
        promptId: 'prompt_test_v1',
        systemInstruction: secret,
        userPrompt: 42,
      });
      const error = await rejectionOf(handle.registry.getPrompt('prompt_test_v1'));
      expect(error).toBeInstanceOf(RegistryDocumentInvalidError);
      if (!(error instanceof RegistryDocumentInvalidError)) return;
      expect(error.code).toBe('INVALID_STEP_INPUTS');
      expect(error.issues).toContainEqual({ path: '/userPrompt', keyword: 'type' });
      expect(JSON.stringify({ m: error.message, d: error.details })).not.toContain(secret);
    });

    it('rejects a document whose id field differs from its document id', async () => {
      await handle.putRawDocument(
        'prompts',
        'prompt_test_v1',
        prompt({ promptId: 'prompt_other_v1' }),
      );
      const error = await rejectionOf(handle.registry.getPrompt('prompt_test_v1'));
      expect(error).toBeInstanceOf(RegistryDocumentInvalidError);
    });

    it('rejects a stored report schema that breaks the minimal invariants (LLM_PROFILE_INVALID)', async () => {
      const schema = defaultReportSchema();
      const { details: _details, ...properties } = schema.jsonSchema['properties'] as Record<
        string,
        unknown
      >;
      await handle.putRawDocument('schemas', schema.schemaId, {
        ...schema,
        jsonSchema: { ...schema.jsonSchema, required: ['summary'], properties },
      });
      const error = await rejectionOf(handle.registry.getSchema(schema.schemaId));
      expect(error).toBeInstanceOf(RegistryDocumentInvalidError);
      if (error instanceof RegistryDocumentInvalidError)
        expect(error.code).toBe('LLM_PROFILE_INVALID');
    });

    it('refuses to write an invalid document', async () => {
      const bad = { ...defaultReportSchema(), schemaId: 'report_v1' } as LlmSchema;
      const error = await rejectionOf(handle.registry.saveSchema(bad, 'overwrite'));
      expect(error).toBeInstanceOf(RegistryDocumentInvalidError);
      expect(await handle.registry.getSchema('report_v1')).toBeNull();
    });

    it('seeds the defaults create-only, then reports them unchanged', async () => {
      const clock = (): Date => new Date('2026-03-01T12:00:00Z');
      const first = await seedRegistry(handle.registry, { clock });
      expect(first.map((e) => [e.collection, e.id, e.action, e.applied])).toEqual([
        ...DEFAULT_PROMPTS.map((p) => ['prompts', p.promptId, 'create', true]),
        ...DEFAULT_SCHEMAS.map((s) => ['schemas', s.schemaId, 'create', true]),
      ]);
      for (const p of DEFAULT_PROMPTS) {
        expect(await handle.registry.getPrompt(p.promptId)).toEqual({
          ...p,
          createdAt: '2026-03-01T12:00:00.000Z',
        });
      }
      const second = await seedRegistry(handle.registry, { clock });
      expect(second.every((e) => e.action === 'unchanged' && !e.applied)).toBe(true);
    });

    it('keeps a drifted or broken document unless overwrite is asked for', async () => {
      const month = DEFAULT_PROMPTS[0];
      if (month === undefined) throw new Error('no default prompt');
      await handle.registry.savePrompt({ ...month, userPrompt: 'edited by hand' }, 'create');
      await handle.putRawDocument('schemas', 'llm_report_output_v1', {
        schemaId: 'llm_report_output_v1',
      });

      const dry = await seedRegistry(handle.registry, { overwrite: true, dryRun: true });
      expect(dry.find((e) => e.id === month.promptId)).toMatchObject({
        action: 'overwrite',
        existing: 'different',
        applied: false,
      });
      expect((await handle.registry.getPrompt(month.promptId))?.userPrompt).toBe('edited by hand');

      const kept = await seedRegistry(handle.registry);
      expect(kept.find((e) => e.id === month.promptId)).toMatchObject({
        action: 'skip',
        existing: 'different',
      });
      expect(kept.find((e) => e.id === 'llm_report_output_v1')).toMatchObject({
        action: 'skip',
        existing: 'invalid',
      });
      expect((await handle.registry.getPrompt(month.promptId))?.userPrompt).toBe('edited by hand');

      const replaced = await seedRegistry(handle.registry, {
        overwrite: true,
        clock: () => new Date('2026-03-02T00:00:00Z'),
      });
      expect(replaced.find((e) => e.id === month.promptId)).toMatchObject({
        action: 'overwrite',
        applied: true,
      });
      expect(replaced.find((e) => e.id === 'llm_report_output_v1')).toMatchObject({
        action: 'overwrite',
        existing: 'invalid',
        applied: true,
      });
      const restored = await handle.registry.getPrompt(month.promptId);
      expect(restored?.userPrompt).toBe(month.userPrompt);
      expect(restored?.updatedAt).toBe('2026-03-02T00:00:00.000Z');
      expect(await handle.registry.getSchema('llm_report_output_v1')).toMatchObject({
        jsonSchema: defaultReportSchema().jsonSchema,
      });
    });
  });
}
