import { isValidRunId } from '@tda/flow-engine';
import { DEFAULT_FLOW_RUNS_COLLECTION } from '@tda/flow-store';

/**
 * The CloudEvent attributes the ingress uses (CloudEvents 1.0). Eventarc delivers Firestore
 * events in binary mode: attributes in `ce-*` headers, the document as protobuf in the body,
 * which the worker never needs (it re-reads the run: the event is only a wake-up call).
 */
export interface CloudEventAttributes {
  specversion: string;
  id: string;
  source: string;
  type: string;
  subject?: string;
  time?: string;
}

export interface CloudEventIssue {
  path: string;
  message: string;
}

export type CloudEventParse =
  | { ok: true; event: CloudEventAttributes; mode: 'binary' | 'structured' }
  | { ok: false; issues: CloudEventIssue[] };

/** Header values as node:http gives them (lower-case names). */
export type HttpHeaders = Readonly<Record<string, string | string[] | undefined>>;

const REQUIRED = ['specversion', 'id', 'source', 'type'] as const;
const OPTIONAL = ['subject', 'time'] as const;
/** Attribute values are short identifiers; anything longer is not an Eventarc event. */
const MAX_ATTRIBUTE_LENGTH = 2048;

function header(headers: HttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function collect(read: (name: string) => unknown): CloudEventParse {
  const issues: CloudEventIssue[] = [];
  const attributes: Record<string, string> = {};
  for (const name of [...REQUIRED, ...OPTIONAL]) {
    const value = read(name);
    const required = (REQUIRED as readonly string[]).includes(name);
    if (value === undefined || value === '') {
      if (required) issues.push({ path: name, message: 'required CloudEvent attribute missing' });
      continue;
    }
    if (typeof value !== 'string') {
      issues.push({ path: name, message: 'must be a string' });
    } else if (value.length > MAX_ATTRIBUTE_LENGTH) {
      issues.push({ path: name, message: `longer than ${MAX_ATTRIBUTE_LENGTH} characters` });
    } else {
      attributes[name] = value;
    }
  }
  if (attributes['specversion'] !== undefined && attributes['specversion'] !== '1.0') {
    issues.push({ path: 'specversion', message: "only CloudEvents '1.0' is supported" });
  }
  if (issues.length > 0) return { ok: false, issues };
  const { specversion, id, source, type, subject, time } = attributes;
  // The REQUIRED loop put all four in; narrowing keeps the compiler honest without `!`.
  if (specversion === undefined || id === undefined || source === undefined || type === undefined) {
    return { ok: false, issues: [{ path: '', message: 'required CloudEvent attribute missing' }] };
  }
  return {
    ok: true,
    mode: 'binary',
    event: {
      specversion,
      id,
      source,
      type,
      ...(subject === undefined ? {} : { subject }),
      ...(time === undefined ? {} : { time }),
    },
  };
}

/**
 * Reads a CloudEvent from an HTTP request: structured mode when the content type is
 * `application/cloudevents+json` (attributes in the JSON body), otherwise binary mode (`ce-*`
 * headers; the body is not read). Returns the issues instead of throwing: the edge answers 400.
 */
export function parseCloudEventRequest(headers: HttpHeaders, body: Buffer): CloudEventParse {
  const contentType = (header(headers, 'content-type') ?? '').toLowerCase();
  if (!contentType.startsWith('application/cloudevents+json')) {
    return collect((name) => header(headers, `ce-${name}`));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, issues: [{ path: '', message: 'structured CloudEvent body is not JSON' }] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return {
      ok: false,
      issues: [{ path: '', message: 'structured CloudEvent must be an object' }],
    };
  }
  const record = parsed as Record<string, unknown>;
  const result = collect((name) => record[name]);
  return result.ok ? { ...result, mode: 'structured' } : result;
}

/**
 * Firestore document events the ingress acts on: a run document that was written is the only
 * thing that can make an LLM step executable. `deleted` is not here (nothing to execute in a
 * deleted run). The `.withAuthContext` variants carry the same subject.
 */
export const FIRESTORE_RUN_EVENT_TYPES: readonly string[] = [
  'google.cloud.firestore.document.v1.created',
  'google.cloud.firestore.document.v1.updated',
  'google.cloud.firestore.document.v1.written',
].flatMap((type) => [type, `${type}.withAuthContext`]);

export function isFirestoreRunEventType(type: string): boolean {
  return FIRESTORE_RUN_EVENT_TYPES.includes(type);
}

/**
 * seed 002 "CloudEvent parsing": split `subject` by '/', find the segment equal to the runs
 * collection, take the next segment as runId and validate it against the runId pattern.
 * undefined → the caller logs cloud_event_ignored reason=invalid_subject and writes nothing.
 */
export function runIdFromSubject(
  subject: string | undefined,
  collection: string = DEFAULT_FLOW_RUNS_COLLECTION,
): string | undefined {
  if (subject === undefined) return undefined;
  const segments = subject.split('/');
  const at = segments.indexOf(collection);
  if (at < 0) return undefined;
  const runId = segments[at + 1];
  return isValidRunId(runId) ? runId : undefined;
}
