import { toApiError } from '../api/api-error';
import { JsonView } from './json-view';

interface ErrorPanelProps {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}

/** An API error as people read it: CODE: message, the details when there are some. */
export function ErrorPanel({ error, title = 'Something went wrong', onRetry }: ErrorPanelProps) {
  const apiError = toApiError(error);
  return (
    <div className="error-panel" role="alert">
      <div className="error-panel-head">
        <strong>{title}</strong>
        {onRetry !== undefined && (
          <button type="button" className="btn btn-small" onClick={onRetry}>
            Try again
          </button>
        )}
      </div>
      <p className="error-line">
        <code className="error-code">{apiError.code}</code>: {apiError.message}
      </p>
      {apiError.retryable && <p className="muted small">This may work if you try again.</p>}
      {apiError.details !== undefined && Object.keys(apiError.details).length > 0 && (
        <details className="error-details">
          <summary>Details</summary>
          <JsonView value={apiError.details} />
        </details>
      )}
    </div>
  );
}
