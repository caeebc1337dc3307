import { expect } from 'vitest';
import type { BenchPart } from '../bench-kit';
import type { PlatformData } from './platform.bench';

/**
 * What the platform parts' smoke runs check (no speed): every figure is there, every run of every
 * shape succeeded with each step claimed once, and one more step costs the budget of DESIGN.md
 * §8 — 3 writes, 2 messages, at most 4 reads — counted at the adapters.
 */
export function expectPlatformSmoke(result: BenchPart): void {
  const data = result.data as PlatformData;
  expect(data.floors.firestore.map((r) => r.concurrency)).toEqual([1, 2]);
  expect(data.floors.hop.map((r) => r.concurrency)).toEqual([1, 2]);
  for (const row of data.floors.firestore) expect(row.opsPerSecond).toBeGreaterThan(0);
  expect(data.floors.pubsub.latency.p50).toBeGreaterThan(0);
  expect(data.floors.pubsub.burst.messagesPerSecond).toBeGreaterThan(0);
  expect(data.floors.artifacts.map((r) => r.concurrency)).toEqual([1, 2]);
  for (const row of data.floors.artifacts) expect(row.opsPerSecond).toBeGreaterThan(0);
  expect(data.hops.map((r) => r.concurrency)).toEqual([1, 2]);
  for (const row of data.hops) {
    // A chain of 3: three dispatches and finalizes, two advances per run.
    expect(row.dispatch.samples).toBe(row.runs * 3);
    expect(row.finalize.samples).toBe(row.runs * 3);
    expect(row.advance.samples).toBe(row.runs * 2);
  }
  for (const row of data.throughput) {
    expect(row.outcomes).toEqual({ SUCCEEDED: row.runs });
    expect(row.runsClaimedOnce).toBe(row.runs);
    expect(row.counts.messages).toEqual({
      step_ready: row.runs * row.stepsPerRun,
      step_event: row.runs * row.stepsPerRun,
    });
    // The stack's event loop is one thread of the process (the client drives from its own).
    expect(row.cpu.mainThreadSeconds).toBeGreaterThan(0);
    expect(row.cpu.mainThreadSeconds).toBeLessThanOrEqual(row.cpu.processSeconds);
  }
  // Queries are per run (the trigger's quota and admission), not per step: only bounded here.
  expect(data.marginalPerStep).toMatchObject({ writes: 3, messages: 2, conflicts: 0 });
  // Within DESIGN's 4: the claim's read and the advance's (the finalize starts from the claim's
  // snapshot); the count queries' billed reads add a fraction.
  expect(data.marginalPerStep['reads']).toBeLessThanOrEqual(2.1);
  expect(result.markdown).toMatch(/CPU speed [1-9]\d*k JSON round trips\/s/);
  expect(result.markdown).toContain('| hop | runs at once | samples |');
  expect(result.markdown).toContain('| flow | runs × at once | steps/s |');
  // The stack ran its warm-up before the throughput rows, and the table says so.
  expect(data.warmUpSteps).toBe(4);
  expect(result.markdown).toContain('each stack ran 4 no-op steps first');
  expect(result.markdown).toContain('| one more step (marginal) |');
}
