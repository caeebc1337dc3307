import { useState } from 'react';

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function CopyButton({
  text,
  label = 'Copy',
  name,
}: {
  text: string;
  label?: string;
  /** The accessible name when the visible label alone is not enough ("Copy request_hash"). */
  name?: string;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const onClick = (): void => {
    void copyText(text).then((ok) => {
      setState(ok ? 'copied' : 'failed');
      setTimeout(() => setState('idle'), 1600);
    });
  };
  return (
    <button
      type="button"
      className="btn btn-small btn-ghost"
      onClick={onClick}
      aria-label={name ?? `${label}: ${text.length > 40 ? 'value' : text}`}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label}
    </button>
  );
}
