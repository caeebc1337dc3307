import type { RunEventData } from '../api/api-types';

/** One dispatched Server-Sent Event (WHATWG HTML "event stream interpretation"). */
export interface SseMessage {
  /** `event:` field; "message" when the block had none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last event ID in force when this event was dispatched (for Last-Event-ID). */
  lastEventId: string | undefined;
}

/**
 * Incremental text/event-stream parser: feed it decoded chunks as they arrive (a line or a CRLF
 * may be split across chunks), get the complete events back. Comments (`: heartbeat`) dispatch
 * nothing but are counted, so a caller can tell a quiet stream from a dead one.
 */
export class SseParser {
  private buffer = '';
  private dataLines: string[] = [];
  private eventType = '';
  private idBuffer: string | undefined;
  /** Last `retry:` value in milliseconds, if the server sent one. */
  retryMs: number | undefined;
  /** Comment lines seen so far (heartbeats). */
  comments = 0;

  /** The last event ID the stream set (survives across events, as in EventSource). */
  get lastEventId(): string | undefined {
    return this.idBuffer;
  }

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i += 1) {
      const ch = this.buffer[i];
      if (ch !== '\n' && ch !== '\r') continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (ch === '\r' && i === this.buffer.length - 1) break;
      const line = this.buffer.slice(start, i);
      if (ch === '\r' && this.buffer[i + 1] === '\n') i += 1;
      start = i + 1;
      const message = this.processLine(line);
      if (message !== undefined) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private processLine(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.comments += 1;
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        // unknown fields are ignored (spec)
        break;
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const data = this.dataLines;
    const event = this.eventType;
    this.dataLines = [];
    this.eventType = '';
    if (data.length === 0) return undefined;
    return {
      event: event === '' ? 'message' : event,
      data: data.join('\n'),
      lastEventId: this.idBuffer,
    };
  }
}

/** The run events the console reacts to (issue 13 §2). */
export const RUN_EVENT_TYPES = [
  'run.created',
  'run.status.changed',
  'run.step.changed',
  'run.step.completed',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** What the console uses of an event: its type and the run (and step) it is about. */
export type RunEvent = { type: RunEventType } & Pick<RunEventData, 'runId' | 'stepId' | 'status'>;

/** A run event from an SSE message; undefined for other event types or a malformed payload. */
export function parseRunEvent(message: SseMessage): RunEvent | undefined {
  if (!(RUN_EVENT_TYPES as readonly string[]).includes(message.event)) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const fields = payload as Record<string, unknown>;
  if (typeof fields['runId'] !== 'string') return undefined;
  return {
    type: message.event as RunEventType,
    runId: fields['runId'],
    ...(typeof fields['stepId'] === 'string' ? { stepId: fields['stepId'] } : {}),
    ...(typeof fields['status'] === 'string' ? { status: fields['status'] } : {}),
  };
}
