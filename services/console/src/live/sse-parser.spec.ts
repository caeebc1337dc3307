import { describe, expect, it } from 'vitest';
import { parseRunEvent, SseParser } from './sse-parser';

describe('SseParser', () => {
  it('dispatches an event at the blank line with its type, data and id', () => {
    const parser = new SseParser();
    const out = parser.push('id: 7\nevent: run.created\ndata: {"runId":"r1"}\n\n');
    expect(out).toEqual([{ event: 'run.created', data: '{"runId":"r1"}', lastEventId: '7' }]);
    expect(parser.lastEventId).toBe('7');
  });

  it('assembles events split anywhere across chunks, CRLF split included', () => {
    const text = 'event: a\r\ndata: one\r\n\r\nevent: b\r\ndata: two\r\n\r\n';
    for (let cut = 1; cut < text.length; cut += 1) {
      const parser = new SseParser();
      const out = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
      expect(
        out.map((m) => `${m.event}=${m.data}`),
        `cut at ${cut}`,
      ).toEqual(['a=one', 'b=two']);
    }
  });

  it('joins data lines with a newline, strips one leading space, accepts CR line ends', () => {
    const parser = new SseParser();
    // the last CR may start a CRLF: the event is complete once the next character arrives
    expect(parser.push('data:  two spaces\rdata:x\r\r')).toEqual([]);
    expect(parser.push(':')).toEqual([
      { event: 'message', data: ' two spaces\nx', lastEventId: undefined },
    ]);
  });

  it('counts comments (heartbeats) and dispatches nothing for them or for data-less blocks', () => {
    const parser = new SseParser();
    expect(parser.push(': heartbeat\n\n: heartbeat\n\nevent: x\n\n')).toEqual([]);
    expect(parser.comments).toBe(2);
  });

  it('keeps the last id across events, and an id-only block still moves it', () => {
    const parser = new SseParser();
    parser.push('id: 1\ndata: a\n\n');
    expect(parser.push('data: b\n\n')[0]?.lastEventId).toBe('1');
    parser.push('id: 2\n\n');
    expect(parser.lastEventId).toBe('2');
    parser.push('id: bad\0id\ndata: c\n\n');
    expect(parser.lastEventId).toBe('2');
  });

  it('reads retry only when it is digits; ignores unknown fields; holds an unfinished line', () => {
    const parser = new SseParser();
    parser.push('retry: 2500\nretry: soon\nfoo: bar\ndata: partial');
    expect(parser.retryMs).toBe(2500);
    expect(parser.push('\n\n')).toEqual([
      { event: 'message', data: 'partial', lastEventId: undefined },
    ]);
  });
});

describe('parseRunEvent', () => {
  const message = (event: string, data: string) => ({ event, data, lastEventId: '1' });

  it('reads the run events with runId, stepId and status', () => {
    expect(
      parseRunEvent(
        message('run.step.changed', '{"runId":"r","stepId":"s","status":"RUNNING","extra":1}'),
      ),
    ).toEqual({ type: 'run.step.changed', runId: 'r', stepId: 's', status: 'RUNNING' });
    expect(parseRunEvent(message('run.created', '{"runId":"r"}'))).toEqual({
      type: 'run.created',
      runId: 'r',
    });
  });

  it('drops other event types, bad JSON and payloads without runId', () => {
    expect(parseRunEvent(message('message', '{"runId":"r"}'))).toBeUndefined();
    expect(parseRunEvent(message('run.created', '{nope'))).toBeUndefined();
    expect(parseRunEvent(message('run.created', '{"runId":3}'))).toBeUndefined();
    expect(parseRunEvent(message('run.created', 'null'))).toBeUndefined();
  });
});
