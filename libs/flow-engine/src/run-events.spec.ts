import type { FlowRun } from '@tda/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeRunState,
  encodeRunState,
  knownStateOf,
  runEventsSince,
  stepOrder,
  type KnownRunState,
  type RunEvent,
} from './run-events';
import { dagArbitrary } from './testing/dag-arbitrary';
import { makeRun, seededRandom } from './testing/run-fixtures';
import { simulate, type StepOutcome } from './testing/simulation';

/** What a client holds after applying events: each event's step or run state. */
function apply(known: KnownRunState, event: RunEvent): void {
  const { data } = event;
  if (event.type === 'run.status.changed') known.status = data['status'] as FlowRun['status'];
  if (event.type === 'run.step.changed' || event.type === 'run.step.completed') {
    known.steps.set(data['stepId'] as string, {
      status: data['status'] as never,
      attempt: data['attempt'] as number,
    });
  }
}

function runFor(names: string[], deps: Record<string, string[]>): FlowRun {
  return makeRun(Object.fromEntries(names.map((n) => [n, { dependsOn: deps[n] ?? [] }])), {
    status: 'RUNNING',
  });
}

describe('run events', () => {
  const run = makeRun(
    {
      a: { status: 'SUCCEEDED', attempt: 1 },
      b: { status: 'RUNNING', attempt: 2, dependsOn: ['a'] },
    },
    { status: 'RUNNING' },
  );

  it('from nothing: the run status, then every step as it is now', () => {
    const events = runEventsSince(undefined, run);
    expect(events.map((e) => [e.type, e.data['stepId'] ?? e.data['status']])).toEqual([
      ['run.status.changed', 'RUNNING'],
      ['run.step.completed', 'a'],
      ['run.step.changed', 'b'],
    ]);
    expect(events.at(-1)?.state).toBe('r1.RS1R2');
    expect(events[2]?.data).toMatchObject({ status: 'RUNNING', attempt: 2, previousStatus: null });
  });

  it('a terminal run status comes after the steps that ended it, with CODE: message', () => {
    const known = knownStateOf(run);
    const failed = makeRun(
      {
        a: { status: 'SUCCEEDED', attempt: 1 },
        b: { status: 'FAILED', attempt: 2, dependsOn: ['a'] },
      },
      {
        status: 'FAILED',
        error: { code: 'LLM_TIMEOUT', message: 'no answer', retryable: false },
      },
    );
    const events = runEventsSince(known, failed);
    expect(events.map((e) => e.type)).toEqual(['run.step.completed', 'run.status.changed']);
    expect(events[1]?.data).toMatchObject({
      status: 'FAILED',
      previousStatus: 'RUNNING',
      error: 'LLM_TIMEOUT: no answer',
    });
  });

  it('tokens round-trip, and foreign or oversized tokens are refused', () => {
    const order = stepOrder(run);
    const token = encodeRunState(knownStateOf(run), order);
    expect(decodeRunState(token, order)).toEqual(knownStateOf(run));
    for (const bad of ['', 'r1.', 'x1.RS1', 'r1.RS1R2S3', 'r1.Rz1', `r1.R${'_'.repeat(5000)}`]) {
      expect(decodeRunState(bad, order)).toBeUndefined();
    }
  });

  it('a step added later keeps earlier tokens valid (creation order)', () => {
    const order = stepOrder(run);
    const token = encodeRunState(knownStateOf(run), order);
    const grown = makeRun(
      {
        ...Object.fromEntries(Object.entries(run.steps).map(([k, v]) => [k, v])),
        a0: { createdAt: '2030-01-01T00:00:00.000Z' },
      },
      { status: 'RUNNING' },
    );
    const known = decodeRunState(token, stepOrder(grown));
    expect(known?.steps.get('a')).toEqual({ status: 'SUCCEEDED', attempt: 1 });
    expect(runEventsSince(known, grown).map((e) => e.data['stepId'])).toEqual(['a0']);
  });

  it('property: a client that drops at any event and resumes from its id misses nothing and sees nothing twice', () => {
    fc.assert(
      fc.property(
        dagArbitrary(8),
        fc.integer(),
        fc.integer({ min: 0, max: 10_000 }),
        (dag, seed, cut) => {
          const versions: FlowRun[] = [];
          const outcomes: Record<string, StepOutcome> = Object.fromEntries(
            dag.names.map((n, i) => [
              n,
              i % 5 === 4 ? { status: 'FAILED', code: 'LLM_TIMEOUT' } : { status: 'SUCCEEDED' },
            ]),
          );
          const initial = runFor(dag.names, dag.deps);
          versions.push(initial);
          simulate(initial, {
            outcomes,
            random: seededRandom(seed),
            crashRate: 0.2,
            onWrite: (_before, after) => versions.push(after),
          });
          // A live stream sees some versions (listeners may coalesce writes), emitting the diffs.
          const client: KnownRunState = { steps: new Map() };
          const seen: RunEvent[] = [];
          let server: KnownRunState | undefined;
          const stopAt = cut % (versions.length + 1);
          for (const version of versions.slice(0, stopAt)) {
            for (const event of runEventsSince(server, version)) {
              seen.push(event);
              apply(client, event);
            }
            server = knownStateOf(version);
          }
          const last = seen.at(-1);
          const final = versions.at(-1) ?? initial;
          // Reconnect with Last-Event-ID against the latest version: a fresh server decodes it.
          const resumedFrom =
            last === undefined ? undefined : decodeRunState(last.state, stepOrder(final));
          if (last !== undefined) expect(resumedFrom).toEqual(client);
          for (const event of runEventsSince(resumedFrom, final)) {
            if (event.type !== 'run.status.changed') {
              const before = client.steps.get(event.data['stepId'] as string);
              expect({ status: before?.status, attempt: before?.attempt }).not.toEqual({
                status: event.data['status'],
                attempt: event.data['attempt'],
              });
            } else {
              expect(client.status).not.toBe(event.data['status']);
            }
            apply(client, event);
          }
          expect(client).toEqual(knownStateOf(final));
        },
      ),
      { numRuns: 150 },
    );
  });
});
