import { describe, expect, it } from 'vitest';
import { encodePushEnvelope, parsePushEnvelope } from './pubsub-push.envelope';

const SUBSCRIPTION = 'projects/tda-test/subscriptions/tda-step-ready-ohlcv-export-sub';
const STEP_READY = {
  runId: '20260101-000000_BTC-USDT_abc',
  stepId: 'ohlcv_export:1d',
  stepType: 'OHLCV_EXPORT',
  attempt: 0,
  dispatchedAt: '2026-01-01T00:00:00.000Z',
};

/** A real-looking push body (both spellings, as Pub/Sub sends them). */
function body(overrides: Record<string, unknown> = {}, message: Record<string, unknown> = {}) {
  const base = encodePushEnvelope({
    subscription: SUBSCRIPTION,
    messageId: '2070443601311540',
    data: STEP_READY,
    attributes: { messageType: 'step_ready', runId: STEP_READY.runId },
    publishTime: new Date('2026-01-01T00:00:01.123Z'),
  });
  return Buffer.from(
    JSON.stringify({
      ...base,
      message: { ...(base['message'] as Record<string, unknown>), ...message },
      ...overrides,
    }),
  );
}

describe('parsePushEnvelope', () => {
  it('decodes a Pub/Sub push body into the message the pull client would deliver', () => {
    const parsed = parsePushEnvelope(body({ deliveryAttempt: 3 }, { orderingKey: 'run-1' }));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.envelope).toMatchObject({
      subscription: SUBSCRIPTION,
      deliveryAttempt: 3,
      message: {
        messageId: '2070443601311540',
        attributes: { messageType: 'step_ready', runId: STEP_READY.runId },
        orderingKey: 'run-1',
      },
    });
    expect(parsed.envelope.message.publishTime.toISOString()).toBe('2026-01-01T00:00:01.123Z');
    expect(JSON.parse(parsed.envelope.message.data.toString('utf8'))).toEqual(STEP_READY);
  });

  it('accepts the snake_case spellings, no attributes, no data and nanosecond timestamps', () => {
    const parsed = parsePushEnvelope(
      JSON.stringify({
        message: { message_id: '42', publish_time: '2021-02-26T19:13:55.749123456Z' },
        subscription: SUBSCRIPTION,
      }),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.envelope.message).toMatchObject({ messageId: '42', attributes: {} });
    expect(parsed.envelope.message.data).toHaveLength(0);
    expect(parsed.envelope).not.toHaveProperty('deliveryAttempt');
  });

  const LONG = 'x'.repeat(2000);
  it.each([
    ['a body that is not JSON', Buffer.from('{"message":'), ['(body) body is not JSON']],
    ['a JSON array', Buffer.from('[]'), ['(body) body must be a JSON object']],
    [
      'no message',
      Buffer.from(JSON.stringify({ subscription: SUBSCRIPTION })),
      ['message required object'],
    ],
    ['no subscription', body({ subscription: undefined }), ['subscription required']],
    ['a numeric subscription', body({ subscription: 7 }), ['subscription must be a string']],
    ['no messageId', body({}, { messageId: '', message_id: '' }), ['message.messageId required']],
    [
      'a messageId longer than 256',
      body({}, { messageId: LONG }),
      ['message.messageId longer than 256 characters'],
    ],
    [
      'no publishTime',
      body({}, { publishTime: undefined, publish_time: undefined }),
      ['message.publishTime required'],
    ],
    [
      'a publishTime that is not RFC 3339',
      body({}, { publishTime: 'yesterday' }),
      ['message.publishTime must be an RFC 3339 timestamp'],
    ],
    [
      'data that is not base64',
      body({}, { data: 'not base64!' }),
      ['message.data is not valid base64'],
    ],
    [
      'unpadded base64 data',
      body({}, { data: 'eyJh' + 'YQ' }),
      ['message.data is not valid base64'],
    ],
    ['numeric data', body({}, { data: 12 }), ['message.data must be a base64 string']],
    [
      'attributes that are not an object',
      body({}, { attributes: ['messageType'] }),
      ['message.attributes must be an object of strings'],
    ],
    [
      'a non-string attribute',
      body({}, { attributes: { messageType: 1 } }),
      ['message.attributes.messageType must be a string'],
    ],
    [
      'an attribute value longer than 1024',
      body({}, { attributes: { messageType: LONG } }),
      ['message.attributes.messageType longer than 1024 characters'],
    ],
    [
      'more than 100 attributes',
      body(
        {},
        { attributes: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v'])) },
      ),
      ['message.attributes more than 100 attributes'],
    ],
    [
      'a deliveryAttempt of 0',
      body({ deliveryAttempt: 0 }),
      ['deliveryAttempt must be a positive integer'],
    ],
    [
      'a fractional deliveryAttempt',
      body({ deliveryAttempt: 1.5 }),
      ['deliveryAttempt must be a positive integer'],
    ],
    [
      'several problems at once',
      body({ subscription: '' }, { data: '%%%', messageId: undefined, message_id: undefined }),
      ['subscription required', 'message.messageId required', 'message.data is not valid base64'],
    ],
  ])('refuses %s', (_name, raw, expected) => {
    const parsed = parsePushEnvelope(raw);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => `${i.path || '(body)'} ${i.message}`)).toEqual(expected);
  });

  it('never echoes a long attribute key in full', () => {
    const key = 'k'.repeat(300);
    const parsed = parsePushEnvelope(body({}, { attributes: { [key]: 'v' } }));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues[0]?.path).toBe(`message.attributes.${'k'.repeat(64)}`);
    expect(parsed.issues[0]?.message).toBe('key must be 1..256 characters');
  });
});
