import { topologicalOrder } from '@tda/flow-engine';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { describe, expect, it } from 'vitest';
import { artifactUris, renderRun, stepsInDagOrder } from './run-view';
import { finishedFlow1, printedSteps, rerunFromWeek, WEEK } from './testing/run-view.fixtures';

const CREATED = new Date('2026-01-15T10:00:00Z');
const MONTH = 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash';

describe('tda get: steps in DAG order', () => {
  it('lists every step after its dependencies, ties by stepId (not alphabetically)', () => {
    const run = finishedFlow1();
    const printed = printedSteps(renderRun(run, CREATED), run);
    expect(printed).toEqual([
      'ohlcv_export:1M',
      'charts:1M:ctpl_default_v1',
      MONTH,
      'ohlcv_export:1w',
      'charts:1w:ctpl_default_v1',
      WEEK,
    ]);
    expect(printed).toEqual(topologicalOrder(run.steps));
    // Alphabetical order would put the charts steps first, before the export they are drawn from.
    expect(printed).not.toEqual(Object.keys(run.steps).sort());
    expect(artifactUris(run).map((a) => a.stepId)).toEqual(printed);
  });

  it('still shows a run whose graph is broken, in stepId order', () => {
    const run = makeFlowRun({
      steps: {
        b: makeStep({ dependsOn: ['a'] }),
        a: makeStep({ dependsOn: ['b'] }),
      },
    });
    expect(stepsInDagOrder(run)).toEqual(['a', 'b']);
    expect(printedSteps(renderRun(run, CREATED), run)).toEqual(['a', 'b']);
  });
});

describe('tda get: steps a rerun reused', () => {
  it('say "reused" instead of a duration; the steps it ran show theirs', () => {
    const rerun = rerunFromWeek(finishedFlow1());
    const lines = renderRun(rerun, new Date('2026-01-16T10:00:05Z'));
    const line = (id: string): string => lines.find((l) => l.includes(` ${id} `)) ?? '';
    for (const id of Object.keys(rerun.steps).filter((s) => s !== WEEK)) {
      expect(line(id)).toMatch(/SUCCEEDED +reused$/);
    }
    expect(line(WEEK)).toMatch(/SUCCEEDED +3\.0s$/);
    expect(printedSteps(lines, rerun)).toEqual(topologicalOrder(rerun.steps));
  });

  it('a step executed in the source run keeps its duration there', () => {
    const lines = renderRun(finishedFlow1(), CREATED);
    expect(lines.join('\n')).not.toContain('reused');
    expect(lines.find((l) => l.includes(` ${MONTH} `))).toMatch(/SUCCEEDED +2\.0s$/);
  });
});

describe('tda get: dynamic steps (flow 5)', () => {
  it('says which step asked for a step the run added at run time', () => {
    const run = makeFlowRun({
      steps: {
        report: makeStep({ dependsOn: [] }),
        'indicators_on_demand:1d:req_0123456789': makeStep({
          stepType: 'INDICATORS_ON_DEMAND',
          dependsOn: ['report'],
          addedBy: { stepId: 'report', depth: 1 },
        }),
      },
    });
    const lines = renderRun(run, CREATED);
    expect(lines.find((l) => l.includes('indicators_on_demand'))).toMatch(/\+ added by report$/);
    expect(lines.find((l) => l.includes(' report '))).not.toContain('added by');
  });
});
