import type { OutgoingMessage, Publisher } from '@tda/messaging';

export interface PublishedMessage {
  topic: string;
  attributes: Record<string, string>;
  /** The JSON body (Buffers are decoded as UTF-8 JSON when possible). */
  body: unknown;
}

/**
 * A Publisher decorator that records what was published (and optionally forwards to a real
 * broker, e.g. InMemoryBroker), with fault injection for publish.
 */
export class RecordingPublisher implements Publisher {
  readonly published: PublishedMessage[] = [];
  private failures: Error[] = [];
  private sequence = 0;

  constructor(private readonly inner?: Publisher) {}

  failNextPublishes(count: number, error: Error = new Error('broker unavailable')): void {
    this.failures.push(...Array.from({ length: count }, () => error));
  }

  async publish(topic: string, message: OutgoingMessage): Promise<string> {
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    const id =
      this.inner === undefined ? String(++this.sequence) : await this.inner.publish(topic, message);
    this.published.push({
      topic,
      attributes: { ...message.attributes },
      body: Buffer.isBuffer(message.data) ? decode(message.data) : structuredClone(message.data),
    });
    return id;
  }
}

function decode(data: Buffer): unknown {
  try {
    return JSON.parse(data.toString('utf8')) as unknown;
  } catch {
    return data.toString('base64');
  }
}
