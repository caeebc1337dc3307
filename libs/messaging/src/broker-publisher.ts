import type { StepEventMessage, StepReadyMessage } from '@tda/contracts';
import { childTraceparent, currentLogContext, logEvent, type Logger } from '@tda/observability';
import type { Publisher } from './broker.port';
import { DEFAULT_PREFIX, MESSAGE_TYPES, stepEventsTopic, stepReadyTopic } from './topology';

/** Attributes of a JSON message; `messageType` is what PubSubServer routes on. */
export type JsonMessageAttributes = { messageType: string; traceparent?: string } & Record<
  string,
  string | undefined
>;

export interface BrokerPublisherOptions {
  publisher: Publisher;
  /** Topology prefix used to name topics (default 'tda'). */
  prefix?: string;
  logger?: Logger;
}

/**
 * Publishes JSON bodies with the attributes the transport and the logs rely on: `messageType`
 * and a W3C `traceparent` — the caller's, else a child of the current log context's trace,
 * else a fresh trace — so one trace id follows a run across services.
 */
export class BrokerPublisher {
  private readonly publisher: Publisher;
  private readonly prefix: string;
  private readonly logger: Logger | undefined;

  constructor(options: BrokerPublisherOptions) {
    this.publisher = options.publisher;
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    this.logger = options.logger;
  }

  async publishJson(
    topic: string,
    body: object,
    attributes: JsonMessageAttributes,
  ): Promise<string> {
    const clean: Record<string, string> = {};
    for (const [key, value] of Object.entries(attributes)) {
      if (value !== undefined) clean[key] = value;
    }
    const contextTrace = currentLogContext()['traceparent'];
    clean['traceparent'] =
      attributes.traceparent ??
      childTraceparent(typeof contextTrace === 'string' ? contextTrace : undefined);
    const messageId = await this.publisher.publish(topic, { data: body, attributes: clean });
    if (this.logger !== undefined) {
      logEvent(this.logger, 'debug', 'message_published', {
        topic,
        messageId,
        messageType: attributes.messageType,
      });
    }
    return messageId;
  }

  /** Orchestrator -> worker: to the stepType's step-ready topic. */
  publishStepReady(message: StepReadyMessage, traceparent?: string): Promise<string> {
    return this.publishJson(stepReadyTopic(message.stepType, this.prefix), message, {
      messageType: MESSAGE_TYPES.stepReady,
      runId: message.runId,
      stepId: message.stepId,
      stepType: message.stepType,
      traceparent,
    });
  }

  /** Worker -> orchestrator: to the step-events topic. */
  publishStepEvent(message: StepEventMessage, traceparent?: string): Promise<string> {
    return this.publishJson(stepEventsTopic(this.prefix), message, {
      messageType: MESSAGE_TYPES.stepEvent,
      runId: message.runId,
      stepId: message.stepId,
      stepType: message.stepType,
      traceparent,
    });
  }
}
