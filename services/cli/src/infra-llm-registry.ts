import type { Firestore } from '@google-cloud/firestore';
import type { InfraPlanItem } from '@tda/infra';
import { FirestorePromptRegistry, seedRegistry, type SeedPlanEntry } from '@tda/llm';

/** gRPC NOT_FOUND: the project has no (default) Firestore database yet. */
const NOT_FOUND = 5;

function itemOf(entry: SeedPlanEntry): InfraPlanItem {
  const kind = entry.collection === 'prompts' ? 'llm-prompt' : 'llm-schema';
  switch (entry.action) {
    case 'create':
    case 'overwrite':
      return { action: 'create', kind, name: entry.id, changes: [] };
    case 'unchanged':
      return { action: 'unchanged', kind, name: entry.id, changes: [] };
    case 'skip':
      return {
        action: 'skip',
        kind,
        name: entry.id,
        changes: [],
        note:
          entry.existing === 'invalid'
            ? 'breaks its contract; `tda llm seed --force` replaces it'
            : 'differs from the seed (edited on purpose?); `tda llm seed --force` replaces it',
      };
  }
}

/**
 * The last section of `tda infra apply` on GCP: the LLM worker reads its prompts and output
 * schemas from Firestore (llm_prompts / llm_schemas) and, on gcp, never seeds them itself. Seeding
 * here is create-only — a document someone edited is reported, never replaced (that is
 * `tda llm seed --force`). A dry run against a project whose database does not exist yet (the
 * database row above says create) plans nothing instead of failing.
 */
export async function applyLlmRegistry(
  firestore: Firestore,
  options: { dryRun: boolean; databasePlanned: boolean },
): Promise<InfraPlanItem[]> {
  try {
    const plan = await seedRegistry(new FirestorePromptRegistry(firestore), {
      overwrite: false,
      dryRun: options.dryRun,
    });
    return plan.map(itemOf);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (options.dryRun && options.databasePlanned && code === NOT_FOUND) {
      return [
        {
          action: 'skip',
          kind: 'llm-registry',
          name: 'llm_prompts, llm_schemas',
          changes: [],
          note: 'the Firestore database is created by this apply; seeded then',
        },
      ];
    }
    throw error;
  }
}
