import { describe, expect, it } from 'vitest';
import { DEFAULT_PROMPTS, DEFAULT_SCHEMAS } from './default-registry';
import { InMemoryPromptRegistry } from './in-memory-prompt.registry';
import { RegistryDocumentInvalidError } from './llm.errors';
import { describePromptRegistryConformance } from './testing';

describePromptRegistryConformance('InMemoryPromptRegistry', async () => {
  const registry = new InMemoryPromptRegistry();
  return {
    registry,
    putRawDocument: async (collection, id, data) => registry.putRawDocument(collection, id, data),
  };
});

describe('InMemoryPromptRegistry', () => {
  it('starts with the given documents', async () => {
    const registry = new InMemoryPromptRegistry({
      prompts: DEFAULT_PROMPTS,
      schemas: DEFAULT_SCHEMAS,
    });
    expect(await registry.getPrompt('prompt_week_v1')).toEqual(DEFAULT_PROMPTS[1]);
    expect(await registry.getSchema('llm_report_output_v1')).toEqual(DEFAULT_SCHEMAS[0]);
  });

  it('refuses invalid initial documents', () => {
    expect(
      () =>
        new InMemoryPromptRegistry({
          prompts: [{ promptId: 'bad id', systemInstruction: 'a', userPrompt: 'b' }],
        }),
    ).toThrow(RegistryDocumentInvalidError);
  });

  it('returns copies: a caller mutating a result does not change the registry', async () => {
    const registry = new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS });
    const prompt = await registry.getPrompt('prompt_month_v1');
    if (prompt === null) throw new Error('missing');
    prompt.userPrompt = 'mutated';
    expect((await registry.getPrompt('prompt_month_v1'))?.userPrompt).toBe(
      DEFAULT_PROMPTS[0]?.userPrompt,
    );
  });
});
