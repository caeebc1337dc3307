import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { toApiError } from '../../api/api-error';
import { fetchStepFile } from '../../api/queries';

interface ChartImageProps {
  runId: string;
  stepId: string;
  fileName: string;
  alt: string;
  width: number;
  height: number;
}

/**
 * A chart PNG of a step's bundle. <img src> cannot send the Authorization header, so the file
 * is fetched with it and shown through an object URL.
 */
export function ChartImage({ runId, stepId, fileName, alt, width, height }: ChartImageProps) {
  const file = useQuery({
    queryKey: ['artifact', runId, stepId, 'file', fileName],
    queryFn: () => fetchStepFile(runId, stepId, fileName),
    staleTime: Infinity,
    retry: false,
  });
  // One object URL per shown image, released as soon as the browser has decoded it.
  const url = useMemo(
    () => (file.data === undefined ? undefined : URL.createObjectURL(file.data)),
    [file.data],
  );

  if (file.isError) {
    const error = toApiError(file.error);
    return (
      <div className="chart-missing" style={{ aspectRatio: `${width} / ${height}` }}>
        <span>
          Image not available — <code>{error.code}</code>: {error.message}
        </span>
      </div>
    );
  }
  if (url === undefined) {
    return (
      <div
        className="chart-missing skeleton"
        style={{ aspectRatio: `${width} / ${height}` }}
        role="status"
        aria-label="Loading chart"
      />
    );
  }
  return (
    <img
      className="chart-img"
      src={url}
      alt={alt}
      width={width}
      height={height}
      onLoad={() => URL.revokeObjectURL(url)}
    />
  );
}
