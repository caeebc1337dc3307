import { InMemoryArtifactStore } from '@tda/artifacts';
import type { FlowRun, LlmReportFile, ReportRef } from '@tda/contracts';
import { applyPatch, createRun, stepPatch } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import {
  AGGREGATE_AS_OF,
  aggregateInputReport,
  aggregateReportRef,
  type AggregateInputFixture,
} from '@tda/llm/testing';
import { serializeReport } from '../llm-report-file';
import { FIXTURE_NOW } from './llm-report.fixtures';

/**
 * Fixtures of the aggregated report (flow 3, aggregated_report_v1): per-timeframe report files of
 * an earlier run stored as artifacts, and a flow-3 run built by the real catalogue from the refs
 * the trigger would resolve, its one LLM_REPORT step (no timeframe, no upstream steps) READY.
 */
export const AGGREGATE_STEP = 'llm_report:aggregate:prompt_aggregate_v1:model_gemini_2_5_flash';

export const DEFAULT_AGGREGATE_INPUTS: readonly AggregateInputFixture[] = [
  { timeframe: '1M', direction: 'bullish', strength: 'strong' },
  { timeframe: '1w', direction: 'bullish' },
  { timeframe: '1d', direction: 'bearish', supports: [63_000], resistances: [64_800] },
];

export interface AggregateFixture {
  run: FlowRun;
  artifacts: InMemoryArtifactStore;
  /** The input report files, in refs order. */
  files: LlmReportFile[];
  refs: ReportRef[];
  /** Where the aggregated report goes: no timeframe, so the `_` segment. */
  reportUri: string;
}

export interface AggregateFixtureOptions {
  inputs?: readonly AggregateInputFixture[];
  /** Changes the refs the run is built from (after the files were stored under the originals). */
  refs?: (refs: ReportRef[]) => ReportRef[];
  asOf?: string;
  now?: Date;
  /** The runId suffix's source (default seeded: the same run for the same `now`). */
  random?: () => number;
}

/** A flow-3 run over stored input reports, its aggregated report step READY. */
export async function aggregateFixture(
  options: AggregateFixtureOptions = {},
): Promise<AggregateFixture> {
  const now = options.now ?? FIXTURE_NOW;
  const artifacts = new InMemoryArtifactStore();
  const files = (options.inputs ?? DEFAULT_AGGREGATE_INPUTS).map(aggregateInputReport);
  const stored = files.map(aggregateReportRef);
  for (const [index, file] of files.entries()) {
    const uri = stored[index]?.gcsUri ?? '';
    await artifacts.put(uri, serializeReport(file), { contentType: 'application/json' });
  }
  const refs = options.refs?.(stored) ?? stored;
  const created = createRun({
    flowKey: 'aggregated_report_v1',
    scope: { symbol: 'BTC-USDT', asOf: options.asOf ?? AGGREGATE_AS_OF, reportRefs: refs },
    ownerId: 'user-1',
    trigger: { type: 'USER', source: 'test' },
    now,
    random: options.random ?? seededRandom(11),
  });
  if (created.steps[AGGREGATE_STEP] === undefined) {
    throw new Error(`flow 3 built no ${AGGREGATE_STEP}`);
  }
  const run = applyPatch(created, {
    status: 'RUNNING',
    startedAt: now.toISOString(),
    ...stepPatch(AGGREGATE_STEP, { status: 'READY' }),
  });
  return {
    run,
    artifacts,
    files,
    refs,
    reportUri: `gs://tda-artifacts/runs/${run.runId}/_/${AGGREGATE_STEP}.json`,
  };
}
