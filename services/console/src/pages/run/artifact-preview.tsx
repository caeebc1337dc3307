import { useQuery } from '@tanstack/react-query';
import { artifactQuery } from '../../api/queries';
import type { StepType } from '../../api/api-types';
import { artifactView } from '../../model/artifacts';
import { ErrorPanel } from '../../ui/error-panel';
import { JsonView } from '../../ui/json-view';
import { SkeletonBlock } from '../../ui/skeleton';
import { AccountView, ChartsView, OhlcvView } from './artifact-views';
import { RecommendationView, ReportView } from './llm-views';

interface ArtifactPreviewProps {
  runId: string;
  stepId: string;
  stepType: StepType;
  /** The step panel shows no model metadata of its own (older runs): the artifact's then. */
  withModel: boolean;
}

/** The step's primary artifact, rendered by its contract. */
export function ArtifactPreview({ runId, stepId, stepType, withModel }: ArtifactPreviewProps) {
  const artifact = useQuery(artifactQuery(runId, stepId));
  if (artifact.isPending) return <SkeletonBlock lines={5} label="Loading the result" />;
  if (artifact.isError) {
    return (
      <ErrorPanel
        error={artifact.error}
        title="The result could not be loaded"
        onRetry={() => void artifact.refetch()}
      />
    );
  }
  const view = artifactView(stepType, artifact.data);
  switch (view.kind) {
    case 'charts':
      return <ChartsView manifest={view.manifest} runId={runId} stepId={stepId} />;
    case 'ohlcv':
      return <OhlcvView data={view.export} />;
    case 'report':
      return <ReportView file={view.file} withModel={withModel} />;
    case 'recommendation':
      return <RecommendationView file={view.file} withModel={withModel} />;
    case 'account':
      return <AccountView snapshot={view.snapshot} />;
    case 'json':
      return <JsonView value={view.value} label="artifact" />;
  }
}
