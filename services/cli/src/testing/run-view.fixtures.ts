import type { FlowRun } from '@tda/contracts';
import { buildRerun, flowCatalogue } from '@tda/flow-engine';

/* Runs for the run view specs (tda get / tda watch): flow 1 finished, and a rerun of it. */

const CREATED = new Date('2026-01-15T10:00:00Z');
export const WEEK = 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash';

/** Flow 1 (month + week report) with every step SUCCEEDED after 2 s of work. */
export function finishedFlow1(): FlowRun {
  const run = flowCatalogue.createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: { symbol: 'ETH-USDT' },
    ownerId: 'tester',
    trigger: { type: 'USER', source: 'test' },
    now: CREATED,
    random: () => 0.25,
  });
  for (const [id, step] of Object.entries(run.steps)) {
    step.status = 'SUCCEEDED';
    step.attempt = 1;
    step.finishedAt = '2026-01-15T10:00:02Z';
    step.outputs = {
      gcs_uri: `gs://tda-artifacts/runs/${run.runId}/x/${id}.json`,
      execution: { timing: { startedAt: '2026-01-15T10:00:00Z' } },
    };
  }
  run.status = 'SUCCEEDED';
  return run;
}

/** A rerun of flow 1 from the weekly report: everything else reused, the week report done in 3 s. */
export function rerunFromWeek(source: FlowRun): FlowRun {
  const decision = buildRerun(source, {
    fromStepId: WEEK,
    runId: '20260116-100000_ETH-USDT_rerun1',
    now: new Date('2026-01-16T10:00:00Z'),
  });
  if (decision.kind !== 'rerun') throw new Error(`no rerun: ${decision.kind}`);
  const { run } = decision;
  const week = run.steps[WEEK];
  if (week === undefined) throw new Error('no week step');
  week.status = 'SUCCEEDED';
  week.attempt = 1;
  week.finishedAt = '2026-01-16T10:00:05Z';
  week.outputs = {
    gcs_uri: `gs://tda-artifacts/runs/${run.runId}/1w/${WEEK}.json`,
    execution: { timing: { startedAt: '2026-01-16T10:00:02Z' } },
  };
  run.status = 'SUCCEEDED';
  run.finishedAt = '2026-01-16T10:00:05Z';
  return run;
}

/** The step ids of renderRun's step lines, in the order printed. */
export function printedSteps(lines: readonly string[], run: FlowRun): string[] {
  return lines.flatMap((line) => {
    const id = /^ {2}\S (\S+)/.exec(line)?.[1];
    return id !== undefined && id in run.steps ? [id] : [];
  });
}
