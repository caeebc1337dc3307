import type { FlowRun } from '@tda/contracts';
import { LIST_LIMIT_MAX, type FlowRunStore, type RunListQuery } from '@tda/flow-store';

/** The runs of a filter, newest first, and whether pages were left unread. */
export interface RunPages {
  runs: FlowRun[];
  /** More pages than `maxPages` matched: `runs` is the newest part only. */
  truncated: boolean;
}

/**
 * Every run matching `filter`, read page by page (LIST_LIMIT_MAX a page) up to `maxPages`: the
 * one paging loop behind admission, quotas, idempotency lookups and the replay preview.
 */
export async function listRunPages(
  store: Pick<FlowRunStore, 'list'>,
  filter: Omit<RunListQuery, 'limit' | 'cursor'>,
  maxPages: number,
): Promise<RunPages> {
  const runs: FlowRun[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const result = await store.list({
      ...filter,
      limit: LIST_LIMIT_MAX,
      ...(cursor === undefined ? {} : { cursor }),
    });
    runs.push(...result.runs);
    if (result.nextCursor === null) return { runs, truncated: false };
    cursor = result.nextCursor;
  }
  return { runs, truncated: true };
}
