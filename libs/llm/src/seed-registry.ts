import type { LlmPrompt, LlmSchema } from '@tda/contracts';
import { DEFAULT_PROMPTS, DEFAULT_SCHEMAS } from './default-registry';
import { RegistryDocumentInvalidError } from './llm.errors';
import { canonicalJson } from './output-schema';
import type { PromptRegistry, PromptRegistryWriter } from './prompt-registry.port';

/**
 * What seeding does with one document:
 * - `create`: missing, written (createdAt stamped);
 * - `unchanged`: present with the same content (timestamps ignored), not written;
 * - `skip`: present but different or invalid, left as is (no overwrite requested), or created
 *   by someone else between our read and our create-only write;
 * - `overwrite`: present but different or invalid, replaced (overwrite requested).
 */
export type SeedAction = 'create' | 'unchanged' | 'skip' | 'overwrite';

export interface SeedPlanEntry {
  collection: 'prompts' | 'schemas';
  id: string;
  action: SeedAction;
  /** What was found: missing, the same content, different content, or a contract-breaking doc. */
  existing: 'missing' | 'same' | 'different' | 'invalid';
  /** false on a dry run (and for unchanged/skip). */
  applied: boolean;
}

export interface SeedRegistryOptions {
  /** Replace documents whose content differs from the seed (default false: create-only). */
  overwrite?: boolean;
  /** Compute the plan without writing. */
  dryRun?: boolean;
  /** Defaults: DEFAULT_PROMPTS / DEFAULT_SCHEMAS. */
  prompts?: readonly LlmPrompt[];
  schemas?: readonly LlmSchema[];
  /** createdAt/updatedAt stamps. */
  clock?: () => Date;
}

const TIMESTAMP_FIELDS = new Set(['createdAt', 'updatedAt']);

function content(doc: object): string {
  return canonicalJson(
    Object.fromEntries(Object.entries(doc).filter(([key]) => !TIMESTAMP_FIELDS.has(key))),
  );
}

type Lookup<T> = { existing: 'missing' } | { existing: 'invalid' } | { existing: 'found'; doc: T };

async function lookup<T>(read: () => Promise<T | null>): Promise<Lookup<T>> {
  try {
    const doc = await read();
    return doc === null ? { existing: 'missing' } : { existing: 'found', doc };
  } catch (error) {
    if (error instanceof RegistryDocumentInvalidError) return { existing: 'invalid' };
    throw error;
  }
}

async function seedOne<T extends object>(
  collection: 'prompts' | 'schemas',
  id: string,
  seed: T,
  read: () => Promise<T | null>,
  save: (doc: T, mode: 'create' | 'overwrite') => Promise<{ written: boolean }>,
  options: SeedRegistryOptions,
): Promise<SeedPlanEntry> {
  const now = (options.clock ?? (() => new Date()))().toISOString();
  const dryRun = options.dryRun === true;
  const found = await lookup(read);
  if (found.existing === 'missing') {
    if (dryRun) return { collection, id, action: 'create', existing: 'missing', applied: false };
    const { written } = await save({ ...seed, createdAt: now }, 'create');
    return written
      ? { collection, id, action: 'create', existing: 'missing', applied: true }
      : { collection, id, action: 'skip', existing: 'different', applied: false };
  }
  const existing =
    found.existing === 'invalid'
      ? 'invalid'
      : content(found.doc) === content(seed)
        ? 'same'
        : 'different';
  if (existing === 'same') return { collection, id, action: 'unchanged', existing, applied: false };
  if (options.overwrite !== true)
    return { collection, id, action: 'skip', existing, applied: false };
  if (dryRun) return { collection, id, action: 'overwrite', existing, applied: false };
  const createdAt =
    found.existing === 'found' &&
    typeof (found.doc as { createdAt?: unknown }).createdAt === 'string'
      ? (found.doc as { createdAt: string }).createdAt
      : now;
  await save({ ...seed, createdAt, updatedAt: now }, 'overwrite');
  return { collection, id, action: 'overwrite', existing, applied: true };
}

/**
 * Brings the registry up to the seed content (backs `tda llm seed`): creates what is missing
 * with create-only writes, leaves equal documents alone, and replaces differing or invalid ones
 * only with `overwrite` (a promptId names an immutable version: a changed text should normally
 * get a new _v<N> instead). Returns one plan entry per document, prompts first, in seed order.
 */
export async function seedRegistry(
  registry: PromptRegistry & PromptRegistryWriter,
  options: SeedRegistryOptions = {},
): Promise<SeedPlanEntry[]> {
  const plan: SeedPlanEntry[] = [];
  for (const prompt of options.prompts ?? DEFAULT_PROMPTS) {
    plan.push(
      await seedOne(
        'prompts',
        prompt.promptId,
        prompt,
        () => registry.getPrompt(prompt.promptId),
        (doc, mode) => registry.savePrompt(doc, mode),
        options,
      ),
    );
  }
  for (const schema of options.schemas ?? DEFAULT_SCHEMAS) {
    plan.push(
      await seedOne(
        'schemas',
        schema.schemaId,
        schema,
        () => registry.getSchema(schema.schemaId),
        (doc, mode) => registry.saveSchema(doc, mode),
        options,
      ),
    );
  }
  return plan;
}
