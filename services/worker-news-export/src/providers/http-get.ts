import { StepError } from '@tda/worker-kit';

export interface HttpGetOptions {
  /** What the error messages call the source (`gdelt`, `feed`). */
  label: string;
  timeoutMs: number;
  /** Bodies over this many bytes are refused (a feed is tens of KB, not megabytes). */
  maxBytes: number;
  accept: string;
  /** The step's signal: an abort of the step stops the request and is rethrown as is. */
  signal: AbortSignal;
}

export const USER_AGENT = 'tda-news-export/1';

/** The host of a source, the only part of its URL that errors and artifacts name. */
export function hostOf(url: string): string {
  return new URL(url).host.toLowerCase();
}

/**
 * A source's failure: UPSTREAM_UNAVAILABLE, retryable when the source may answer later (5xx, 408,
 * 429, timeout, network), not when it answered something unusable (other 4xx, not a feed, too
 * big). `reason` is short and sanitized: a status, never a URL with its query.
 */
export class NewsSourceError extends StepError {
  constructor(
    readonly label: string,
    readonly host: string,
    readonly reason: string,
    retryable: boolean,
  ) {
    // No `cause`: a fetch error may carry the full URL, and a feed URL may carry a token.
    super('UPSTREAM_UNAVAILABLE', `${label} ${host}: ${reason}`, {
      retryable,
      details: { source: label, host, reason },
    });
  }
}

function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

async function readCapped(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    total += value.byteLength;
    if (total > maxBytes) {
      // The rest is never downloaded.
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(Buffer.from(value));
  }
}

/**
 * GET with global fetch under a timeout and a size cap; the body as UTF-8 text. Failures are
 * NewsSourceErrors; an abort of the step itself is rethrown untouched (the harness decides).
 */
export async function httpGetText(url: string, options: HttpGetOptions): Promise<string> {
  const host = hostOf(url);
  const fail = (reason: string, retryable: boolean): never => {
    throw new NewsSourceError(options.label, host, reason, retryable);
  };
  const timeout = AbortSignal.timeout(options.timeoutMs);
  let body: Buffer | undefined;
  try {
    const response = await fetch(url, {
      headers: { accept: options.accept, 'user-agent': USER_AGENT },
      redirect: 'follow',
      signal: AbortSignal.any([options.signal, timeout]),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return fail(`HTTP ${response.status}`, isTransientStatus(response.status));
    }
    body = await readCapped(response, options.maxBytes);
  } catch (error) {
    options.signal.throwIfAborted();
    if (error instanceof NewsSourceError) throw error;
    if (timeout.aborted) return fail(`no answer within ${options.timeoutMs} ms`, true);
    return fail('unreachable (network error)', true);
  }
  if (body === undefined) return fail(`answer over ${options.maxBytes} bytes`, false);
  return body.toString('utf8');
}
