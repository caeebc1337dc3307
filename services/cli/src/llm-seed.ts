import {
  seedRegistry,
  type PromptRegistry,
  type PromptRegistryWriter,
  type SeedPlanEntry,
} from '@tda/llm';

/** What `tda llm seed` did (or, on a dry run, would do) with one registry document. */
export type SeedRowAction = 'created' | 'kept' | 'replaced' | 'would-create' | 'would-replace';

export interface SeedRow {
  kind: 'prompt' | 'schema';
  id: string;
  action: SeedRowAction;
  note: string;
}

export interface LlmSeedOptions {
  /** Replace documents whose content differs from the seed (or break their contract). */
  force: boolean;
  /** Plan only: read, compare, write nothing. */
  dryRun: boolean;
}

function noteOf(entry: SeedPlanEntry): string {
  switch (entry.existing) {
    case 'missing':
      return '';
    case 'same':
      return 'same content';
    case 'different':
      return entry.action === 'skip' ? 'differs from the seed; --force replaces it' : 'differed';
    case 'invalid':
      return entry.action === 'skip'
        ? 'breaks its contract; --force replaces it'
        : 'broke its contract';
  }
}

function actionOf(entry: SeedPlanEntry): SeedRowAction {
  switch (entry.action) {
    case 'create':
      return entry.applied ? 'created' : 'would-create';
    case 'overwrite':
      return entry.applied ? 'replaced' : 'would-replace';
    case 'unchanged':
    case 'skip':
      return 'kept';
  }
}

/** seedRegistry's plan in the words of the CLI table. */
export function seedRows(plan: readonly SeedPlanEntry[]): SeedRow[] {
  return plan.map((entry) => ({
    kind: entry.collection === 'prompts' ? 'prompt' : 'schema',
    id: entry.id,
    action: actionOf(entry),
    note: noteOf(entry),
  }));
}

/**
 * Seeds the default prompts and schemas (@tda/llm DEFAULT_PROMPTS / DEFAULT_SCHEMAS):
 * create-only by default, `force` replaces differing documents, `dryRun` writes nothing.
 */
export async function seedLlmRegistry(
  registry: PromptRegistry & PromptRegistryWriter,
  options: LlmSeedOptions,
): Promise<SeedRow[]> {
  return seedRows(
    await seedRegistry(registry, { overwrite: options.force, dryRun: options.dryRun }),
  );
}

/** A fixed-width table (kind, id, action, note) and a one-line summary. */
export function renderSeedTable(rows: readonly SeedRow[], dryRun: boolean): string[] {
  const cells = [
    ['KIND', 'ID', 'ACTION', 'NOTE'],
    ...rows.map((r) => [r.kind, r.id, r.action, r.note]),
  ];
  const widths = [0, 1, 2].map((column) => Math.max(...cells.map((c) => (c[column] ?? '').length)));
  const lines = cells.map((c) =>
    c
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  const counts = new Map<SeedRowAction, number>();
  for (const row of rows) counts.set(row.action, (counts.get(row.action) ?? 0) + 1);
  const summary = [...counts].map(([action, n]) => `${n} ${action}`).join(', ');
  lines.push('', dryRun ? `dry run, nothing written: ${summary}` : summary);
  return lines;
}
