import type { FlowRun } from '@tda/contracts';
import { topologicalOrder } from '@tda/flow-engine';
import { describe, expect, it } from 'vitest';
import { ApiClient } from './api-client';
import { finishedFlow1, printedSteps, rerunFromWeek, WEEK } from './testing/run-view.fixtures';
import { watchRun } from './watch';

/** An ApiClient whose GET /runs/{id} answers the given runs in turn (the last one repeats). */
function clientAnswering(runs: readonly FlowRun[]): ApiClient {
  let calls = 0;
  const fetchImpl = (async () => {
    const run = runs[Math.min(calls, runs.length - 1)];
    calls += 1;
    return new Response(JSON.stringify(run), { status: 200 });
  }) as typeof fetch;
  return new ApiClient({ baseUrl: 'http://api.test', token: 't', fetchImpl });
}

describe('tda watch', () => {
  it('draws the steps in DAG order and the reused ones as "reused", up to the terminal run', async () => {
    const rerun = rerunFromWeek(finishedFlow1());
    const running = structuredClone(rerun);
    running.status = 'RUNNING';
    delete running.finishedAt;
    const weekStep = running.steps[WEEK];
    if (weekStep === undefined) throw new Error('no week step');
    weekStep.status = 'RUNNING';
    delete weekStep.finishedAt;

    const written: string[] = [];
    const out = { write: (text: string) => written.push(text) > 0 };
    const final = await watchRun(clientAnswering([running, rerun]), rerun.runId, {
      out,
      intervalMs: 0,
    });
    expect(final.status).toBe('SUCCEEDED');
    // Not a TTY: one block per change (RUNNING, then SUCCEEDED).
    expect(written).toHaveLength(2);
    for (const block of written) {
      const lines = block.trimEnd().split('\n');
      expect(printedSteps(lines, rerun)).toEqual(topologicalOrder(rerun.steps));
      const reused = lines.filter((l) => / reused$/.test(l));
      expect(reused).toHaveLength(Object.keys(rerun.steps).length - 1);
    }
  });
});
