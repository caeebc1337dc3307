/**
 * The body Pub/Sub POSTs to a push endpoint (https://cloud.google.com/pubsub/docs/push):
 * `{ message: { data, attributes?, messageId, publishTime, orderingKey? }, subscription,
 * deliveryAttempt? }`. Pub/Sub sends the ids and times twice (`messageId` and `message_id`,
 * `publishTime` and `publish_time`); either spelling is accepted.
 */
export interface PushEnvelope {
  /** Full subscription name, `projects/<project>/subscriptions/<name>`. */
  subscription: string;
  message: PushedMessage;
  /** Set by Pub/Sub only when the subscription has a dead-letter policy. */
  deliveryAttempt?: number;
}

/** The message inside an envelope, decoded: what the streaming pull client would deliver. */
export interface PushedMessage {
  messageId: string;
  /** The decoded `data` (empty when Pub/Sub omitted it: a message with attributes only). */
  data: Buffer;
  attributes: Readonly<Record<string, string>>;
  publishTime: Date;
  orderingKey?: string;
}

export interface PushEnvelopeIssue {
  path: string;
  message: string;
}

export type PushEnvelopeParse =
  { ok: true; envelope: PushEnvelope } | { ok: false; issues: PushEnvelopeIssue[] };

/** Pub/Sub limits: 100 attributes, keys ≤ 256 bytes, values ≤ 1024 bytes. */
const MAX_ATTRIBUTES = 100;
const MAX_ATTRIBUTE_KEY = 256;
const MAX_ATTRIBUTE_VALUE = 1024;
/** Ids are decimal strings of ~16 digits and names are short; longer is not Pub/Sub. */
const MAX_ID_LENGTH = 256;
const MAX_SUBSCRIPTION_LENGTH = 512;
/** Standard base64 with padding, as Pub/Sub encodes `data` (Buffer.from accepts anything). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** RFC 3339 as Pub/Sub writes it, e.g. 2021-02-26T19:13:55.749Z (fraction up to nanoseconds). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function boundedString(
  value: unknown,
  path: string,
  max: number,
  issues: PushEnvelopeIssue[],
): string | undefined {
  if (value === undefined || value === '') {
    issues.push({ path, message: 'required' });
    return undefined;
  }
  if (typeof value !== 'string') {
    issues.push({ path, message: 'must be a string' });
    return undefined;
  }
  if (value.length > max) {
    issues.push({ path, message: `longer than ${max} characters` });
    return undefined;
  }
  return value;
}

function parseAttributes(
  value: unknown,
  issues: PushEnvelopeIssue[],
): Record<string, string> | undefined {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) {
    issues.push({ path: 'message.attributes', message: 'must be an object of strings' });
    return undefined;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_ATTRIBUTES) {
    issues.push({ path: 'message.attributes', message: `more than ${MAX_ATTRIBUTES} attributes` });
    return undefined;
  }
  const attributes: Record<string, string> = {};
  for (const [key, item] of entries) {
    // Keys come from outside: bound what an issue path may echo.
    const path = `message.attributes.${key.slice(0, 64)}`;
    if (key.length === 0 || key.length > MAX_ATTRIBUTE_KEY) {
      issues.push({ path, message: `key must be 1..${MAX_ATTRIBUTE_KEY} characters` });
    } else if (typeof item !== 'string') {
      issues.push({ path, message: 'must be a string' });
    } else if (item.length > MAX_ATTRIBUTE_VALUE) {
      issues.push({ path, message: `longer than ${MAX_ATTRIBUTE_VALUE} characters` });
    } else {
      attributes[key] = item;
    }
  }
  return attributes;
}

function parseData(value: unknown, issues: PushEnvelopeIssue[]): Buffer | undefined {
  // Pub/Sub omits `data` for a message that has attributes only.
  if (value === undefined || value === '') return Buffer.alloc(0);
  if (typeof value !== 'string') {
    issues.push({ path: 'message.data', message: 'must be a base64 string' });
    return undefined;
  }
  if (!BASE64.test(value)) {
    issues.push({ path: 'message.data', message: 'is not valid base64' });
    return undefined;
  }
  return Buffer.from(value, 'base64');
}

function parsePublishTime(value: unknown, issues: PushEnvelopeIssue[]): Date | undefined {
  const text = boundedString(value, 'message.publishTime', 64, issues);
  if (text === undefined) return undefined;
  const time = new Date(text);
  if (!RFC3339.test(text) || Number.isNaN(time.getTime())) {
    issues.push({ path: 'message.publishTime', message: 'must be an RFC 3339 timestamp' });
    return undefined;
  }
  return time;
}

function parseDeliveryAttempt(value: unknown, issues: PushEnvelopeIssue[]): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    issues.push({ path: 'deliveryAttempt', message: 'must be a positive integer' });
    return undefined;
  }
  return value;
}

/**
 * Decodes a push request body into the message the streaming pull transport would have
 * received. Only the envelope is checked here; whether the message is a usable step-ready
 * message (messageType attribute, JSON body, contract) is decided by the same transport and
 * harness as for pull.
 */
export function parsePushEnvelope(body: Buffer | string): PushEnvelopeParse {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return { ok: false, issues: [{ path: '', message: 'body is not JSON' }] };
  }
  if (!isRecord(json)) {
    return { ok: false, issues: [{ path: '', message: 'body must be a JSON object' }] };
  }
  const issues: PushEnvelopeIssue[] = [];
  const subscription = boundedString(
    json['subscription'],
    'subscription',
    MAX_SUBSCRIPTION_LENGTH,
    issues,
  );
  const deliveryAttempt = parseDeliveryAttempt(json['deliveryAttempt'], issues);
  const raw = json['message'];
  if (!isRecord(raw)) {
    issues.push({ path: 'message', message: 'required object' });
    return { ok: false, issues };
  }
  const message = parseMessage(raw, issues);
  if (issues.length > 0 || subscription === undefined || message === undefined) {
    return { ok: false, issues };
  }
  return {
    ok: true,
    envelope: {
      subscription,
      message,
      ...(deliveryAttempt === undefined ? {} : { deliveryAttempt }),
    },
  };
}

/** The envelope's `message` (camelCase or the snake_case aliases Pub/Sub also sends). */
function parseMessage(
  raw: Record<string, unknown>,
  issues: PushEnvelopeIssue[],
): PushedMessage | undefined {
  const messageId = boundedString(
    raw['messageId'] ?? raw['message_id'],
    'message.messageId',
    MAX_ID_LENGTH,
    issues,
  );
  const publishTime = parsePublishTime(raw['publishTime'] ?? raw['publish_time'], issues);
  const data = parseData(raw['data'], issues);
  const attributes = parseAttributes(raw['attributes'], issues);
  let orderingKey: string | undefined;
  const rawKey = raw['orderingKey'] ?? raw['ordering_key'];
  if (rawKey !== undefined && rawKey !== '') {
    orderingKey = boundedString(rawKey, 'message.orderingKey', 1024, issues);
  }
  if (
    messageId === undefined ||
    publishTime === undefined ||
    data === undefined ||
    attributes === undefined
  ) {
    return undefined;
  }
  return {
    messageId,
    data,
    attributes: Object.freeze(attributes),
    publishTime,
    ...(orderingKey === undefined ? {} : { orderingKey }),
  };
}

/** A push envelope for `message` (tests, local tools): what Pub/Sub would POST. */
export function encodePushEnvelope(options: {
  subscription: string;
  messageId: string;
  data: Buffer | object;
  attributes?: Record<string, string>;
  publishTime?: Date;
  deliveryAttempt?: number;
  orderingKey?: string;
}): Record<string, unknown> {
  const data = Buffer.isBuffer(options.data)
    ? options.data
    : Buffer.from(JSON.stringify(options.data), 'utf8');
  const publishTime = (options.publishTime ?? new Date()).toISOString();
  return {
    message: {
      data: data.toString('base64'),
      attributes: { ...options.attributes },
      messageId: options.messageId,
      message_id: options.messageId,
      publishTime,
      publish_time: publishTime,
      ...(options.orderingKey === undefined ? {} : { orderingKey: options.orderingKey }),
    },
    subscription: options.subscription,
    ...(options.deliveryAttempt === undefined ? {} : { deliveryAttempt: options.deliveryAttempt }),
  };
}
