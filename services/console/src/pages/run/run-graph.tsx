import { Controls, Handle, Position, ReactFlow, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { ELK as ElkLayout } from 'elkjs/lib/elk-api';
import { createContext, useContext, useEffect, useMemo, useRef, useState } from 'react';
import type { RunDocument } from '../../api/api-types';
import {
  layoutPositions,
  NODE_HEIGHT,
  NODE_WIDTH,
  toElkGraph,
  toFlowElements,
  type Point,
  type StepNode,
} from '../../model/dag-layout';
import { stepStatusLabel } from '../../model/status';
import { Skeleton } from '../../ui/skeleton';
import { stepTypeLabel } from './step-labels';

let elk: Promise<ElkLayout> | undefined;

/** ELK is the biggest dependency by far: loaded once, when a graph is first drawn. */
function loadElk(): Promise<ElkLayout> {
  elk ??= import('elkjs/lib/elk.bundled.js').then(({ default: Elk }) => new Elk());
  return elk;
}

const SelectStep = createContext<(stepId: string) => void>(() => undefined);

/** A node is a real button: keyboard users select steps in the graph like mouse users. */
function StepNodeView({ data }: NodeProps<StepNode>) {
  const select = useContext(SelectStep);
  const attempt = data.attempt > 1 ? ` · attempt ${data.attempt}` : '';
  return (
    <>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <button
        type="button"
        className={`step-node tone-${data.tone}${data.selected ? ' is-selected' : ''}`}
        aria-pressed={data.selected}
        aria-label={`Step ${data.stepId}: ${stepStatusLabel(data.status)}${attempt}`}
        title={data.stepId}
        onClick={() => select(data.stepId)}
      >
        <span className="step-node-type">{stepTypeLabel(data.stepType)}</span>
        <span className="step-node-id">{data.stepId}</span>
        <span className="step-node-status">
          <span className="badge-dot" aria-hidden="true" />
          {stepStatusLabel(data.status)}
          {attempt}
        </span>
      </button>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </>
  );
}

const NODE_TYPES = { step: StepNodeView };

/** Below this the node labels cannot be read. */
const MIN_FIT_ZOOM = 0.5;

interface RunGraphProps {
  run: RunDocument;
  selectedStepId: string | undefined;
  onSelect: (stepId: string) => void;
}

/** The step DAG, laid out left to right by ELK; colours follow the statuses, live. */
export function RunGraph({ run, selectedStepId, onSelect }: RunGraphProps) {
  // Re-layout only when the shape changes, not on every status change.
  const shape = JSON.stringify(Object.entries(run.steps).map(([id, s]) => [id, s.dependsOn]));
  const [layout, setLayout] = useState<{
    shape: string;
    positions: Record<string, Point>;
    width: number;
    height: number;
  } | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const [boxWidth, setBoxWidth] = useState(0);

  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    const observer = new ResizeObserver(([entry]) => setBoxWidth(entry?.contentRect.width ?? 0));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    let live = true;
    const steps = Object.fromEntries(
      (JSON.parse(shape) as [string, string[]][]).map(([id, dependsOn]) => [id, { dependsOn }]),
    );
    void loadElk()
      .then((engine) => engine.layout(toElkGraph(steps)))
      .then((result) => {
        if (live)
          setLayout({
            shape,
            positions: layoutPositions(result),
            width: result.width ?? NODE_WIDTH,
            height: result.height ?? NODE_HEIGHT,
          });
      });
    return () => {
      live = false;
    };
  }, [shape]);

  const elements = useMemo(
    () => toFlowElements(run.steps, layout?.positions ?? {}, selectedStepId),
    [run.steps, layout, selectedStepId],
  );

  // Tall enough for the laid-out graph at the scale it fits the width with (never above 1).
  // On a phone the whole graph would be unreadable: it opens at half size and pans.
  const scale =
    layout === null || boxWidth === 0
      ? 1
      : Math.max(MIN_FIT_ZOOM, Math.min(1, boxWidth / (layout.width + 24)));
  const tooWide = layout !== null && boxWidth > 0 && boxWidth / (layout.width + 24) < MIN_FIT_ZOOM;
  const height = layout === null ? 200 : Math.min(Math.max(layout.height * scale + 48, 200), 520);
  return (
    <div ref={box} className="graph" style={{ height }} role="group" aria-label="Step graph">
      {layout === null ? (
        <div role="status" aria-label="Laying out the steps">
          <Skeleton height={180} />
        </div>
      ) : (
        <SelectStep.Provider value={onSelect}>
          <ReactFlow
            // a new layout or a new width: fit the view again
            key={`${layout.shape}:${Math.round(boxWidth / 40)}`}
            nodes={elements.nodes}
            edges={elements.edges}
            nodeTypes={NODE_TYPES}
            fitView
            fitViewOptions={{
              padding: 0.06,
              maxZoom: 1,
              minZoom: MIN_FIT_ZOOM,
              // too wide to read whole (a phone): open on the selected step instead
              ...(tooWide && selectedStepId !== undefined
                ? { nodes: [{ id: selectedStepId }] }
                : {}),
            }}
            minZoom={0.2}
            maxZoom={1.5}
            nodesDraggable={false}
            nodesConnectable={false}
            nodesFocusable={false}
            edgesFocusable={false}
            elementsSelectable={false}
            zoomOnScroll={false}
            preventScrolling={false}
            colorMode="light"
          >
            <Controls showInteractive={false} position="top-right" orientation="horizontal" />
          </ReactFlow>
        </SelectStep.Provider>
      )}
    </div>
  );
}
