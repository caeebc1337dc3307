import ELK from 'elkjs/lib/elk.bundled.js';
import { describe, expect, it } from 'vitest';
import { downstreamOf, topologicalOrder } from './dag';
import {
  layoutPositions,
  NODE_WIDTH,
  toElkGraph,
  toFlowElements,
  type GraphStep,
} from './dag-layout';

/** Flow 1's shape: two exports, their charts, two reports (1w reads the 1M report). */
const STEPS: Record<string, GraphStep> = {
  'llm_report:1w': {
    dependsOn: ['charts:1w', 'llm_report:1M'],
    status: 'PENDING',
    stepType: 'LLM_REPORT',
  },
  'ohlcv_export:1M': { dependsOn: [], status: 'SUCCEEDED', stepType: 'OHLCV_EXPORT', attempt: 1 },
  'ohlcv_export:1w': { dependsOn: [], status: 'SUCCEEDED', stepType: 'OHLCV_EXPORT', attempt: 1 },
  'charts:1M': { dependsOn: ['ohlcv_export:1M'], status: 'SUCCEEDED', stepType: 'CHART_EXPORT' },
  'charts:1w': {
    dependsOn: ['ohlcv_export:1w'],
    status: 'FAILED',
    stepType: 'CHART_EXPORT',
    attempt: 2,
  },
  'llm_report:1M': { dependsOn: ['charts:1M'], status: 'RUNNING', stepType: 'LLM_REPORT' },
};

describe('DAG order', () => {
  it('puts every step after its dependencies, ties in document order', () => {
    expect(topologicalOrder(STEPS)).toEqual([
      'ohlcv_export:1M',
      'ohlcv_export:1w',
      'charts:1M',
      'charts:1w',
      'llm_report:1M',
      'llm_report:1w',
    ]);
  });

  it('keeps steps behind a cycle or an unknown dependency, at the end', () => {
    const order = topologicalOrder({
      a: { dependsOn: ['b'] },
      b: { dependsOn: ['a'] },
      c: { dependsOn: [] },
      d: { dependsOn: ['ghost'] },
    });
    expect(order).toEqual(['c', 'd', 'a', 'b']);
  });

  it('finds what a rerun from a step executes again', () => {
    expect(downstreamOf(STEPS, 'charts:1M')).toEqual(['llm_report:1M', 'llm_report:1w']);
    expect(downstreamOf(STEPS, 'llm_report:1w')).toEqual([]);
  });
});

describe('DAG → ELK graph', () => {
  it('has one sized node per step and one edge per dependency, dependency → dependent', () => {
    const graph = toElkGraph(STEPS);
    expect(graph.layoutOptions?.['elk.direction']).toBe('RIGHT');
    expect(graph.layoutOptions?.['elk.algorithm']).toBe('layered');
    expect(graph.children?.map((c) => [c.id, c.width])).toHaveLength(6);
    expect(graph.children?.every((c) => c.width === NODE_WIDTH)).toBe(true);
    expect(graph.edges?.map((e) => `${e.sources[0]}>${e.targets[0]}`).sort()).toEqual([
      'charts:1M>llm_report:1M',
      'charts:1w>llm_report:1w',
      'llm_report:1M>llm_report:1w',
      'ohlcv_export:1M>charts:1M',
      'ohlcv_export:1w>charts:1w',
    ]);
  });

  it('is laid out left to right by elkjs: inputs first, every dependency left of its dependents', async () => {
    const layout = await new ELK().layout(toElkGraph(STEPS));
    const at = layoutPositions(layout);
    const xs = Object.values(at).map((p) => p.x);
    expect(at['ohlcv_export:1M']?.x).toBe(Math.min(...xs));
    expect(at['ohlcv_export:1w']?.x).toBe(Math.min(...xs));
    for (const [id, step] of Object.entries(STEPS)) {
      for (const dep of step.dependsOn) {
        expect(at[dep]?.x ?? Infinity, `${dep} left of ${id}`).toBeLessThan(at[id]?.x ?? -1);
      }
    }
  });
});

describe('DAG → React Flow elements', () => {
  it('carries status, tone, attempt and selection; edges take the colour of their source', () => {
    const { nodes, edges } = toFlowElements(STEPS, { 'charts:1w': { x: 300, y: 90 } }, 'charts:1w');
    const failed = nodes.find((n) => n.id === 'charts:1w');
    expect(failed).toMatchObject({
      type: 'step',
      position: { x: 300, y: 90 },
      selected: true,
      data: { status: 'FAILED', tone: 'danger', attempt: 2, stepType: 'CHART_EXPORT' },
    });
    expect(nodes.find((n) => n.id === 'charts:1M')?.position).toEqual({ x: 0, y: 0 });
    expect(nodes.filter((n) => n.selected)).toHaveLength(1);
    const intoRunning = edges.find((e) => e.target === 'llm_report:1M');
    expect(intoRunning).toMatchObject({ source: 'charts:1M', animated: true });
    expect(intoRunning?.className).toContain('tone-success');
    expect(edges.find((e) => e.source === 'charts:1w')?.className).toContain('tone-danger');
  });
});
