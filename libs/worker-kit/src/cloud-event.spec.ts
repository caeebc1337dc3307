import { describe, expect, it } from 'vitest';
import {
  FIRESTORE_RUN_EVENT_TYPES,
  isFirestoreRunEventType,
  parseCloudEventRequest,
  runIdFromSubject,
} from './cloud-event';

const RUN_ID = '20260115-100000_BTC-USDT_abc12';
const UPDATED = 'google.cloud.firestore.document.v1.updated';

const binaryHeaders = (overrides: Record<string, string | undefined> = {}) => ({
  'ce-specversion': '1.0',
  'ce-id': 'evt-1',
  'ce-source': '//firestore.googleapis.com/projects/p/databases/(default)',
  'ce-type': UPDATED,
  'ce-subject': `documents/flow_runs/${RUN_ID}`,
  'ce-time': '2026-01-15T10:00:00Z',
  'content-type': 'application/protobuf',
  ...overrides,
});

describe('parseCloudEventRequest', () => {
  it('reads a binary-mode event from ce-* headers without touching the protobuf body', () => {
    const parsed = parseCloudEventRequest(binaryHeaders(), Buffer.from([0x0a, 0xff, 0x00]));
    expect(parsed).toEqual({
      ok: true,
      mode: 'binary',
      event: {
        specversion: '1.0',
        id: 'evt-1',
        source: '//firestore.googleapis.com/projects/p/databases/(default)',
        type: UPDATED,
        subject: `documents/flow_runs/${RUN_ID}`,
        time: '2026-01-15T10:00:00Z',
      },
    });
  });

  it('reads a structured-mode event from the JSON body', () => {
    const body = { specversion: '1.0', id: 'e2', source: 's', type: UPDATED, data: { x: 1 } };
    const parsed = parseCloudEventRequest(
      { 'content-type': 'application/cloudevents+json; charset=utf-8' },
      Buffer.from(JSON.stringify(body)),
    );
    expect(parsed).toEqual({
      ok: true,
      mode: 'structured',
      event: { specversion: '1.0', id: 'e2', source: 's', type: UPDATED },
    });
  });

  it('names every missing required attribute', () => {
    const parsed = parseCloudEventRequest({ 'content-type': 'application/json' }, Buffer.alloc(0));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.path)).toEqual(['specversion', 'id', 'source', 'type']);
  });

  it('refuses other spec versions, non-string attributes, oversized values and bad JSON', () => {
    const v03 = parseCloudEventRequest(binaryHeaders({ 'ce-specversion': '0.3' }), Buffer.alloc(0));
    expect(v03).toMatchObject({ ok: false, issues: [{ path: 'specversion' }] });
    const structured = { 'content-type': 'application/cloudevents+json' };
    const numeric = parseCloudEventRequest(
      structured,
      Buffer.from(JSON.stringify({ specversion: '1.0', id: 7, source: 's', type: UPDATED })),
    );
    expect(numeric).toMatchObject({
      ok: false,
      issues: [{ path: 'id', message: 'must be a string' }],
    });
    const long = parseCloudEventRequest(
      binaryHeaders({ 'ce-subject': 'x'.repeat(5000) }),
      Buffer.alloc(0),
    );
    expect(long).toMatchObject({ ok: false, issues: [{ path: 'subject' }] });
    expect(parseCloudEventRequest(structured, Buffer.from('{nope'))).toMatchObject({ ok: false });
    expect(parseCloudEventRequest(structured, Buffer.from('[1]'))).toMatchObject({ ok: false });
  });
});

describe('runIdFromSubject (seed 002 CloudEvent parsing)', () => {
  it('takes the segment after the runs collection and validates it', () => {
    expect(runIdFromSubject(`documents/flow_runs/${RUN_ID}`)).toBe(RUN_ID);
    // Split by '/', find the collection segment, take the next one: deeper paths still name it.
    expect(runIdFromSubject(`documents/flow_runs/${RUN_ID}/notes/n1`)).toBe(RUN_ID);
    expect(runIdFromSubject(`documents/runs_v2/${RUN_ID}`, 'runs_v2')).toBe(RUN_ID);
  });

  it('returns undefined for every subject it cannot parse', () => {
    for (const subject of [
      undefined,
      '',
      'documents/flow_runs',
      'documents/flow_runs/',
      `documents/other_runs/${RUN_ID}`,
      'documents/flow_runs/not-a-run-id',
      'documents/flow_runs/../etc',
      'documents/flow_runs/20260115-100000_BTC-USDT_ABC12',
    ]) {
      expect(runIdFromSubject(subject), String(subject)).toBeUndefined();
    }
    expect(runIdFromSubject(`documents/flow_runs/${RUN_ID}`, 'runs_v2')).toBeUndefined();
  });
});

describe('Firestore event types', () => {
  it('acts on created/updated/written (with and without auth context), not on deleted', () => {
    expect(isFirestoreRunEventType(UPDATED)).toBe(true);
    expect(isFirestoreRunEventType(`${UPDATED}.withAuthContext`)).toBe(true);
    expect(isFirestoreRunEventType('google.cloud.firestore.document.v1.written')).toBe(true);
    expect(isFirestoreRunEventType('google.cloud.firestore.document.v1.deleted')).toBe(false);
    expect(isFirestoreRunEventType('google.cloud.pubsub.topic.v1.messagePublished')).toBe(false);
    expect(FIRESTORE_RUN_EVENT_TYPES).toHaveLength(6);
  });
});
