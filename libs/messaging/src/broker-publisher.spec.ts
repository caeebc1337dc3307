import type { StepEventMessage, StepReadyMessage } from '@tda/contracts';
import { parseTraceparent, withLogContext } from '@tda/observability';
import { describe, expect, it } from 'vitest';
import type { OutgoingMessage, Publisher } from './broker.port';
import { BrokerPublisher } from './broker-publisher';

class RecordingPublisher implements Publisher {
  readonly sent: { topic: string; message: OutgoingMessage }[] = [];
  async publish(topic: string, message: OutgoingMessage): Promise<string> {
    this.sent.push({ topic, message });
    return `id-${this.sent.length}`;
  }
}

const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('BrokerPublisher', () => {
  it('adds messageType and keeps a caller traceparent', async () => {
    const recording = new RecordingPublisher();
    const publisher = new BrokerPublisher({ publisher: recording });
    const id = await publisher.publishJson(
      't',
      { a: 1 },
      { messageType: 'x', traceparent: TRACE, runId: 'r' },
    );
    expect(id).toBe('id-1');
    expect(recording.sent[0]).toEqual({
      topic: 't',
      message: { data: { a: 1 }, attributes: { messageType: 'x', traceparent: TRACE, runId: 'r' } },
    });
  });

  it('continues the trace of the current log context with a new span', async () => {
    const recording = new RecordingPublisher();
    const publisher = new BrokerPublisher({ publisher: recording });
    await withLogContext({ traceparent: TRACE }, () =>
      publisher.publishJson('t', {}, { messageType: 'x' }),
    );
    const sent = parseTraceparent(recording.sent[0]?.message.attributes?.['traceparent']);
    expect(sent?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(sent?.spanId).not.toBe('00f067aa0ba902b7');
  });

  it('starts a new trace when there is none, and drops undefined attributes', async () => {
    const recording = new RecordingPublisher();
    const publisher = new BrokerPublisher({ publisher: recording });
    await publisher.publishJson('t', {}, { messageType: 'x', runId: undefined });
    const attributes = recording.sent[0]?.message.attributes ?? {};
    expect(parseTraceparent(attributes['traceparent'])).toBeDefined();
    expect(Object.keys(attributes).sort()).toEqual(['messageType', 'traceparent']);
  });

  it('routes step-ready per step type and step events to one topic, with routing attributes', async () => {
    const recording = new RecordingPublisher();
    const publisher = new BrokerPublisher({ publisher: recording, prefix: 'dev' });
    const ready: StepReadyMessage = {
      runId: '20250101-120000_BTCUSDT_abc',
      stepId: 'LLM_REPORT:1d',
      stepType: 'LLM_REPORT',
      attempt: 0,
      dispatchedAt: '2025-01-01T12:00:00Z',
    };
    const event: StepEventMessage = {
      runId: ready.runId,
      stepId: ready.stepId,
      stepType: 'LLM_REPORT',
      status: 'SUCCEEDED',
      attempt: 1,
      at: '2025-01-01T12:00:05Z',
    };
    await publisher.publishStepReady(ready, TRACE);
    await publisher.publishStepEvent(event, TRACE);
    expect(recording.sent.map((s) => s.topic)).toEqual([
      'dev-step-ready-llm-report',
      'dev-step-events',
    ]);
    expect(recording.sent[0]?.message).toEqual({
      data: ready,
      attributes: {
        messageType: 'step_ready',
        runId: ready.runId,
        stepId: ready.stepId,
        stepType: 'LLM_REPORT',
        traceparent: TRACE,
      },
    });
    expect(recording.sent[1]?.message.attributes?.['messageType']).toBe('step_event');
  });
});
