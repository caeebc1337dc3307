import type { StreamState } from '../live/event-stream';

const TEXT: Record<StreamState, { label: string; title: string }> = {
  live: { label: 'Live', title: 'Updates arrive as they happen (event stream)' },
  connecting: { label: 'Connecting', title: 'Opening the event stream' },
  polling: { label: 'Polling', title: 'The event stream is unavailable: refreshing every 5 s' },
  closed: { label: 'Final', title: 'This run has finished; nothing more will change' },
};

export function LiveIndicator({ state }: { state: StreamState }) {
  const text = TEXT[state];
  return (
    <span
      className={`live-indicator live-${state}`}
      title={text.title}
      role="status"
      aria-label={`Updates: ${text.label}. ${text.title}`}
    >
      <span className="live-dot" aria-hidden="true" />
      {text.label}
    </span>
  );
}
