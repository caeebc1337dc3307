import { describe, expect, it } from 'vitest';
import type { RunDocument, RunStep } from '../api/api-types';
import { buildTimeline, segmentBox } from './timeline';

const T = (s: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + s * 1000).toISOString();

function step(partial: Partial<RunStep> & Pick<RunStep, 'status'>): RunStep {
  return {
    stepType: 'OHLCV_EXPORT',
    dependsOn: [],
    inputs: {},
    outputs: {},
    createdAt: T(0),
    attempt: 0,
    ...partial,
  };
}

function run(steps: Record<string, RunStep>, extra: Partial<RunDocument> = {}): RunDocument {
  return {
    schemaVersion: 1,
    runId: '20260101-000000_BTC-USDT_abc123',
    flowKey: 'market_charts_v1',
    status: 'RUNNING',
    createdAt: T(0),
    updatedAt: T(0),
    trigger: { type: 'USER', source: 'test' },
    scope: { symbol: 'BTC-USDT' },
    ownerId: 'o',
    steps,
    ...extra,
  };
}

describe('buildTimeline', () => {
  it('splits a finished step into queue delay (ready → claimed) and run time (claimed → finished)', () => {
    const timeline = buildTimeline(
      run({
        a: step({
          status: 'SUCCEEDED',
          attempt: 2,
          maxAttempts: 3,
          readyAt: T(1),
          finishedAt: T(10),
          outputs: { execution: { timing: { startedAt: T(4), finishedAt: T(10) } } },
          retryHistory: [{ retriedAt: T(0) }],
        }),
      }),
      Date.parse(T(60)),
    );
    expect(timeline.rows[0]).toMatchObject({
      stepId: 'a',
      attempt: 2,
      maxAttempts: 3,
      retries: 1,
      queueMs: 3000,
      runMs: 6000,
      segments: [
        { kind: 'queue', startMs: Date.parse(T(1)), endMs: Date.parse(T(4)), open: false },
        { kind: 'run', startMs: Date.parse(T(4)), endMs: Date.parse(T(10)), open: false },
      ],
    });
    expect(timeline.startMs).toBe(Date.parse(T(0)));
    expect(timeline.endMs).toBe(Date.parse(T(10)));
  });

  it('grows the open bar of a READY or RUNNING step up to now; a PENDING step has none', () => {
    const now = Date.parse(T(30));
    const timeline = buildTimeline(
      run({
        ready: step({ status: 'READY', readyAt: T(5) }),
        running: step({
          status: 'RUNNING',
          readyAt: T(2),
          attempt: 1,
          outputs: { execution: { timing: { startedAt: T(3) } } },
        }),
        waiting: step({ status: 'PENDING', dependsOn: ['running'] }),
      }),
      now,
    );
    const [ready, running, waiting] = timeline.rows;
    expect(ready?.segments).toEqual([
      { kind: 'queue', startMs: Date.parse(T(5)), endMs: now, open: true },
    ]);
    expect(running?.segments.map((s) => [s.kind, s.open])).toEqual([
      ['queue', false],
      ['run', true],
    ]);
    expect(running?.runMs).toBe(27_000);
    expect(waiting?.segments).toEqual([]);
    expect(timeline.endMs).toBe(now);
  });

  it('draws no bars for a step a rerun copied (its times belong to the source run)', () => {
    const timeline = buildTimeline(
      run({
        a: step({
          status: 'SUCCEEDED',
          readyAt: T(-500),
          finishedAt: T(-400),
          outputs: {
            execution: {
              reusedFrom: { runId: 'src', stepId: 'a' },
              timing: { startedAt: T(-450) },
            },
          },
        }),
      }),
      Date.parse(T(5)),
    );
    expect(timeline.rows[0]).toMatchObject({ reusedFrom: 'src', segments: [] });
    expect(timeline.startMs).toBe(Date.parse(T(0)));
  });

  it('places bars in percent of the run window, never thinner than visible', () => {
    const timeline = { startMs: 0, endMs: 1000, rows: [] };
    expect(segmentBox(timeline, { kind: 'run', startMs: 250, endMs: 750, open: false })).toEqual({
      left: 25,
      width: 50,
    });
    expect(segmentBox(timeline, { kind: 'run', startMs: 500, endMs: 500, open: false }).width).toBe(
      0.4,
    );
  });
});
