import type { Edge, Node } from '@xyflow/react';
import type { ElkNode } from 'elkjs/lib/elk-api';
import type { StepStatus, StepType } from '../api/api-types';
import { topologicalOrder } from './dag';
import { stepTone, type Tone } from './status';

export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 62;

/** What a DAG node shows. */
export interface GraphStep {
  dependsOn: readonly string[];
  status: StepStatus;
  stepType: StepType;
  attempt?: number;
}

export interface StepNodeData extends Record<string, unknown> {
  stepId: string;
  stepType: StepType;
  status: StepStatus;
  tone: Tone;
  attempt: number;
  selected: boolean;
}

export type StepNode = Node<StepNodeData, 'step'>;

/**
 * The ELK graph of a run's steps: one node per step, one edge per dependency (dependency →
 * dependent), laid out by the layered algorithm left to right, nodes in document order so that
 * a re-layout after a status change does not reshuffle the picture.
 */
export function toElkGraph(steps: Readonly<Record<string, Pick<GraphStep, 'dependsOn'>>>): ElkNode {
  const order = topologicalOrder(steps);
  return {
    id: 'run',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.spacing.nodeNode': '18',
      'elk.layered.spacing.nodeNodeBetweenLayers': '56',
      // Inputs on the left: every step without dependencies starts in the first column.
      'elk.layered.layering.strategy': 'LONGEST_PATH_SOURCE',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      'elk.padding': '[top=12,left=12,bottom=12,right=12]',
    },
    children: order.map((id) => ({ id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: order.flatMap((id) =>
      (steps[id]?.dependsOn ?? [])
        .filter((dep) => dep in steps)
        .map((dep) => ({ id: edgeId(dep, id), sources: [dep], targets: [id] })),
    ),
  };
}

export function edgeId(from: string, to: string): string {
  return `${from}->${to}`;
}

export interface Point {
  x: number;
  y: number;
}

/** Node positions of a laid-out graph, by step id. */
export function layoutPositions(layout: ElkNode): Record<string, Point> {
  return Object.fromEntries(
    (layout.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]),
  );
}

/** React Flow nodes and edges for the steps at `positions` (missing ones at the origin). */
export function toFlowElements(
  steps: Readonly<Record<string, GraphStep>>,
  positions: Readonly<Record<string, Point>>,
  selectedStepId: string | undefined,
): { nodes: StepNode[]; edges: Edge[] } {
  const order = topologicalOrder(steps);
  const nodes: StepNode[] = order.map((id) => {
    const step = steps[id] as GraphStep;
    return {
      id,
      type: 'step',
      position: positions[id] ?? { x: 0, y: 0 },
      width: NODE_WIDTH,
      height: NODE_HEIGHT,
      selected: id === selectedStepId,
      data: {
        stepId: id,
        stepType: step.stepType,
        status: step.status,
        tone: stepTone(step.status),
        attempt: step.attempt ?? 0,
        selected: id === selectedStepId,
      },
    };
  });
  const edges: Edge[] = order.flatMap((id) =>
    (steps[id]?.dependsOn ?? [])
      .filter((dep) => dep in steps)
      .map((dep) => ({
        id: edgeId(dep, id),
        source: dep,
        target: id,
        // the data flowing into a running step
        animated: steps[id]?.status === 'RUNNING',
        className: `edge tone-${stepTone(steps[dep]?.status ?? 'PENDING')}`,
      })),
  );
  return { nodes, edges };
}
