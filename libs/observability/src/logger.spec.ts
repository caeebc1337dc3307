import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withLogContext } from './log-context';
import { LOG_EVENTS } from './log-events';
import { createLogger, logEvent } from './logger';
import { createMemoryLogger } from './memory-logger';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('createLogger (Cloud Logging shape)', () => {
  it('writes severity, message, ISO time, serviceContext and the event name', () => {
    const { logger, records } = createMemoryLogger({
      service: 'worker-llm-report',
      version: '1.2.3',
      level: 'debug',
    });
    logEvent(logger, 'info', 'service_started', { port: 8080 }, 'worker up');
    expect(records).toHaveLength(1);
    const [line] = records;
    expect(line).toMatchObject({
      severity: 'INFO',
      message: 'worker up',
      event: 'service_started',
      port: 8080,
      serviceContext: { service: 'worker-llm-report', version: '1.2.3' },
    });
    expect(typeof line?.['time']).toBe('string');
    expect(new Date(String(line?.['time'])).toISOString()).toBe(line?.['time']);
    // pino's own fields are replaced by the Cloud Logging ones
    expect(line).not.toHaveProperty('level');
    expect(line).not.toHaveProperty('msg');
    expect(line).not.toHaveProperty('pid');
  });

  describe('time', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('is the time of each line, to the millisecond (formatted once per millisecond)', () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const { logger, records } = createMemoryLogger({ service: 's' });
      vi.setSystemTime(new Date('2026-11-26T10:00:00.123Z'));
      logEvent(logger, 'info', 'service_started');
      logEvent(logger, 'info', 'service_started');
      vi.setSystemTime(new Date('2026-11-26T10:00:00.124Z'));
      logEvent(logger, 'info', 'service_started');
      vi.setSystemTime(new Date('2026-11-27T00:00:00.000Z'));
      logEvent(logger, 'info', 'service_started');
      expect(records.map((r) => r['time'])).toEqual([
        '2026-11-26T10:00:00.123Z',
        '2026-11-26T10:00:00.123Z',
        '2026-11-26T10:00:00.124Z',
        '2026-11-27T00:00:00.000Z',
      ]);
    });
  });

  it('maps every pino level to a Cloud Logging severity', () => {
    const { logger, records } = createMemoryLogger({ service: 's', level: 'trace' });
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) {
      logEvent(logger, level, 'config_invalid');
    }
    expect(records.map((r) => r.severity)).toEqual([
      'DEBUG',
      'DEBUG',
      'INFO',
      'WARNING',
      'ERROR',
      'CRITICAL',
    ]);
  });

  it('uses the event name as message by default and never lets fields rename the event', () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    logEvent(logger, 'warn', 'message_invalid', { event: 'something_else', reason: 'x' });
    expect(records[0]).toMatchObject({ event: 'message_invalid', message: 'message_invalid' });
  });

  it('respects the level threshold', () => {
    const { logger, records } = createMemoryLogger({ service: 's', level: 'warn' });
    logEvent(logger, 'info', 'message_received');
    logEvent(logger, 'warn', 'lease_lost');
    expect(records.map((r) => r.event)).toEqual(['lease_lost']);
  });

  it('derives the Cloud Logging trace fields from the context traceparent', () => {
    const { logger, records } = createMemoryLogger({ service: 's', projectId: 'tda-prod' });
    withLogContext({ traceparent: TRACEPARENT }, () => logEvent(logger, 'info', 'step_claimed'));
    expect(records[0]).toMatchObject({
      'logging.googleapis.com/trace': 'projects/tda-prod/traces/4bf92f3577b34da6a3ce929d0e0e4736',
      'logging.googleapis.com/spanId': '00f067aa0ba902b7',
      'logging.googleapis.com/trace_sampled': true,
    });
    expect(records[0]).not.toHaveProperty('traceparent');
  });

  it('gives each line the trace of its own context, nested and interleaved', () => {
    const other = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    const { logger, records } = createMemoryLogger({ service: 's' });
    withLogContext({ traceparent: TRACEPARENT, runId: 'a' }, () => {
      logEvent(logger, 'info', 'step_claimed');
      withLogContext({ traceparent: other, runId: 'b' }, () =>
        logEvent(logger, 'info', 'step_claimed'),
      );
      withLogContext({ attempt: 2 }, () => logEvent(logger, 'info', 'step_claimed'));
      logEvent(logger, 'info', 'step_claimed');
    });
    expect(
      records.map((r) => [r['runId'], r['attempt'], r['logging.googleapis.com/trace_sampled']]),
    ).toEqual([
      ['a', undefined, true],
      ['b', undefined, false],
      ['a', 2, true],
      ['a', undefined, true],
    ]);
    expect(records.map((r) => r['logging.googleapis.com/trace'])).toEqual([
      '4bf92f3577b34da6a3ce929d0e0e4736',
      '0af7651916cd43dd8448eb211c80319c',
      '4bf92f3577b34da6a3ce929d0e0e4736',
      '4bf92f3577b34da6a3ce929d0e0e4736',
    ]);
  });

  it('writes the bare trace id without a project and no trace field without a trace', () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    withLogContext({ traceparent: TRACEPARENT }, () => logEvent(logger, 'info', 'step_claimed'));
    withLogContext({ traceparent: 'garbage' }, () => logEvent(logger, 'info', 'step_claimed'));
    logEvent(logger, 'info', 'step_claimed');
    expect(records[0]?.['logging.googleapis.com/trace']).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(records[1]).not.toHaveProperty('logging.googleapis.com/trace');
    expect(records[2]).not.toHaveProperty('logging.googleapis.com/trace');
  });
});

describe('log context propagation', () => {
  it('merges the context into every line, across awaits, and call-site fields win', async () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    await withLogContext({ runId: 'r1', stepId: 'LLM_REPORT:1d', deliveryAttempt: 2 }, async () => {
      logEvent(logger, 'info', 'message_received');
      await sleep(5);
      await Promise.resolve();
      logEvent(logger, 'info', 'step_claimed', { stepId: 'override' });
    });
    logEvent(logger, 'info', 'service_stopped');
    expect(records[0]).toMatchObject({ runId: 'r1', stepId: 'LLM_REPORT:1d', deliveryAttempt: 2 });
    expect(records[1]).toMatchObject({ runId: 'r1', stepId: 'override' });
    expect(records[2]).not.toHaveProperty('runId');
  });

  it('nests contexts and drops undefined fields instead of blanking inherited ones', () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    withLogContext({ runId: 'r1', stepId: 's1' }, () =>
      withLogContext({ messageId: 'm1', stepId: undefined }, () =>
        logEvent(logger, 'info', 'message_received'),
      ),
    );
    expect(records[0]).toMatchObject({ runId: 'r1', stepId: 's1', messageId: 'm1' });
  });

  it('writes context values that need escaping as valid JSON, and redacts secret keys', () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 's', destination: { write: (l) => lines.push(l) } });
    const awkward = 'quote " backslash \\ newline \n tab \t nul \u0000 sep \u2028 lone \ud800 é ✓';
    withLogContext({ runId: awkward, 'odd"key': 1.5, apiKey: 'sk-123', ok: true }, () =>
      logEvent(logger, 'info', 'step_claimed'),
    );
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(line.endsWith('\n')).toBe(true);
    expect(line.trimEnd()).not.toContain('\n');
    expect(line).not.toContain('sk-123');
    expect(JSON.parse(line)).toMatchObject({
      runId: awkward,
      'odd"key': 1.5,
      apiKey: '[REDACTED]',
      ok: true,
      event: 'step_claimed',
    });
  });

  it('writes each field once: nested contexts, and call-site fields over the context', () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 's', destination: { write: (l) => lines.push(l) } });
    withLogContext({ runId: 'r1', traceparent: TRACEPARENT }, () =>
      withLogContext({ stepId: 's1', attempt: 1 }, () => {
        logEvent(logger, 'info', 'step_claimed');
        withLogContext({ attempt: 2, messageId: 'm1' }, () =>
          withLogContext({ worker: 'w' }, () => logEvent(logger, 'info', 'step_claimed')),
        );
        // a call-site field that the context has: written once, the call site's value
        logEvent(logger, 'info', 'step_dispatched', { stepId: 's2', runId: 'r1', n: [1] });
      }),
    );
    const keys = (line: string | undefined) =>
      [...(line ?? '').matchAll(/"([^"]+)":/g)].map((m) => m[1]).sort();
    for (const line of lines) expect(new Set(keys(line)).size).toBe(keys(line).length);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toMatchObject([
      {
        runId: 'r1',
        stepId: 's1',
        attempt: 1,
        'logging.googleapis.com/spanId': '00f067aa0ba902b7',
      },
      { runId: 'r1', stepId: 's1', attempt: 2, messageId: 'm1', worker: 'w' },
      { runId: 'r1', stepId: 's2', attempt: 1, n: [1], event: 'step_dispatched' },
    ]);
    expect(lines[1]).toContain('"logging.googleapis.com/trace_sampled":true');
  });

  it('keeps concurrent contexts apart', async () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    const work = (runId: string, delays: number[]) =>
      withLogContext({ runId }, async () => {
        for (const delay of delays) {
          await sleep(delay);
          logEvent(logger, 'info', 'step_succeeded', { expected: runId });
        }
      });
    await Promise.all([work('a', [5, 1, 7, 0]), work('b', [0, 6, 1, 3]), work('c', [2, 2, 2, 2])]);
    expect(records).toHaveLength(12);
    for (const record of records) expect(record['runId']).toBe(record['expected']);
    // they really interleaved: the line order is not grouped by run
    const order = records.map((r) => r['runId']).join('');
    expect(order).not.toMatch(/^(a{4}|b{4}|c{4}){3}$/);
  });
});

describe('LOG_EVENTS taxonomy', () => {
  it('has unique snake_case names including the required ones', () => {
    expect(new Set(LOG_EVENTS).size).toBe(LOG_EVENTS.length);
    for (const event of LOG_EVENTS) expect(event).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(LOG_EVENTS).toEqual(
      expect.arrayContaining([
        'message_received',
        'message_acked',
        'message_nacked',
        'message_invalid',
        'message_handler_failed',
        'transport_started',
        'transport_draining',
        'transport_stopped',
        'pubsub_push_unauthenticated',
        'pubsub_push_rejected',
        'step_claimed',
        'step_claim_conflict',
        'step_succeeded',
        'step_failed',
        'step_finalize_conflict',
        'run_advanced',
        'step_dispatched',
        'run_queued',
        'run_quota_exceeded',
        'admission_failed',
        'run_retried',
        'subscription_seeked',
        'snapshot_created',
        'lease_lost',
        'structured_output_invalid',
        'structured_output_repair_attempt_started',
        'structured_output_repair_attempt_finished',
        'config_invalid',
        'service_started',
        'service_stopped',
      ]),
    );
  });
});
