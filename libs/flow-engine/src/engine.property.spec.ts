import {
  ERROR_CODES,
  RUN_STATUSES,
  STEP_STATUSES,
  validate,
  type FlowRun,
  type StepStatus,
} from '@tda/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { advance } from './advance';
import { ancestorsOf } from './dag';
import { applyPatch, isEmptyPatch } from './patch';
import {
  deriveRunStatus,
  computeProgress,
  isTerminalRunStatus,
  isTerminalStepStatus,
  sameProgress,
} from './run-status';
import { decideSkip } from './skip';
import { dagArbitrary, type RandomDag } from './testing/dag-arbitrary';
import { at, iso, makeRun, seededRandom, statusesOf, T0 } from './testing/run-fixtures';
import {
  simulate,
  type SimulationOptions,
  type StepOutcome,
  type Writer,
} from './testing/simulation';

/** Every step transition the system may make (reclaim: RUNNING -> READY after a lost lease). */
const ALLOWED: Readonly<Record<StepStatus, readonly StepStatus[]>> = {
  PENDING: ['READY', 'SKIPPED', 'CANCELLED'],
  READY: ['RUNNING', 'SKIPPED', 'CANCELLED', 'FAILED'],
  RUNNING: ['SUCCEEDED', 'FAILED', 'CANCELLED', 'READY'],
  SUCCEEDED: [],
  FAILED: [],
  SKIPPED: [],
  CANCELLED: [],
};

interface Scenario {
  dag: RandomDag;
  outcomes: Record<string, StepOutcome>;
  preSkipped: string[];
}

const scenarioArb: fc.Arbitrary<Scenario> = dagArbitrary(12).chain((dag) =>
  fc.record({
    dag: fc.constant(dag),
    outcomes: fc.record(
      Object.fromEntries(
        dag.names.map((name) => [
          name,
          fc.oneof(
            { weight: 4, arbitrary: fc.constant<StepOutcome>({ status: 'SUCCEEDED' }) },
            {
              weight: 1,
              arbitrary: fc
                .constantFrom(
                  'LLM_TIMEOUT',
                  'MARKET_DATA_UNAVAILABLE',
                  'INVALID_STRUCTURED_OUTPUT' as const,
                )
                .map((code): StepOutcome => ({ status: 'FAILED', code })),
            },
          ),
        ]),
      ),
    ),
    preSkipped: fc.subarray(dag.names, { maxLength: Math.min(2, dag.names.length) }),
  }),
);

/** The created run, with the orchestrator's optional branching decisions (SKIPPED) applied. */
function initialRun(scenario: Scenario, overrides: Partial<FlowRun> = {}): FlowRun {
  let run = makeRun(
    Object.fromEntries(
      Object.entries(scenario.dag.deps).map(([id, dependsOn]) => [id, { dependsOn }]),
    ),
    overrides,
  );
  run.progress = computeProgress(run);
  for (const stepId of scenario.preSkipped) {
    const decision = decideSkip(run, stepId, { now: T0 });
    if (decision.kind === 'skip') run = applyPatch(run, decision.patch);
  }
  return run;
}

/** Checks (a), (b), (c), the transition table and single ownership on every write. */
function checkWrite(before: FlowRun, after: FlowRun, _patch: unknown, writer: Writer): void {
  if (writer.kind === 'worker') {
    // DESIGN §3: a worker writes only its own step: the claim of a READY step, then only while
    // it holds the lease
    for (const [id, step] of Object.entries(after.steps)) {
      if (id !== writer.stepId) expect(step).toEqual(before.steps[id]);
    }
    const prev = before.steps[writer.stepId];
    if (prev?.status === 'RUNNING') expect(prev.lease?.owner).toBe(writer.owner);
    else expect(prev?.status).toBe('READY');
    expect(after.status).toBe(before.status);
  }
  for (const [id, step] of Object.entries(after.steps)) {
    const prev = before.steps[id]?.status;
    expect(prev).toBeDefined();
    if (prev === undefined) return;
    // (a) nothing is READY/RUNNING before every dependency SUCCEEDED
    if (step.status === 'READY' || step.status === 'RUNNING') {
      for (const dep of step.dependsOn) expect(after.steps[dep]?.status).toBe('SUCCEEDED');
    }
    // (b) terminal step states are absorbing; every change is an allowed transition
    if (prev !== step.status) expect(ALLOWED[prev]).toContain(step.status);
    if (isTerminalStepStatus(prev)) expect(step.finishedAt).toBe(before.steps[id]?.finishedAt);
  }
  // (b) terminal run states are absorbing
  if (isTerminalRunStatus(before.status)) {
    expect(after.status).toBe(before.status);
    expect(after.finishedAt).toBe(before.finishedAt);
    expect(after.error).toEqual(before.error);
  }
  // (c) advance is idempotent on every reachable state
  const now = at(86_400);
  const once = applyPatch(after, advance(after, now).patch);
  expect(advance(once, now).patch).toEqual({});
}

function descendantsOfSkipped(scenario: Scenario): Set<string> {
  const skipped = new Set(scenario.preSkipped);
  for (const name of scenario.dag.names) {
    const ancestors = ancestorsOf(
      Object.fromEntries(
        Object.entries(scenario.dag.deps).map(([id, dependsOn]) => [id, { dependsOn }]),
      ),
      name,
    );
    if ([...ancestors].some((a) => scenario.preSkipped.includes(a))) skipped.add(name);
  }
  return skipped;
}

describe('engine properties (random DAGs, random interleavings of workers and advances)', () => {
  it('(a)(b)(c)(e): safety, absorbing terminal states, idempotent advance, termination', () => {
    const seen = {
      SUCCEEDED: 0,
      FAILED: 0,
      CANCELLED: 0,
      RUN_TIMEOUT: 0,
      rejectedWrites: 0,
      reclaims: 0,
    };
    fc.assert(
      fc.property(
        scenarioArb,
        fc.integer(),
        fc.constantFrom(0, 0, 0.25),
        fc.boolean(),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.integer({ min: 3, max: 300 }) },
        ),
        (scenario, seed, crashRate, cancel, deadlineSeconds) => {
          const overrides: Partial<FlowRun> =
            deadlineSeconds === null ? {} : { deadlineAt: iso(deadlineSeconds) };
          const options: SimulationOptions = {
            outcomes: scenario.outcomes,
            random: seededRandom(seed),
            crashRate,
            cancel: cancel && seed % 3 === 0,
            onWrite: checkWrite,
          };
          const result = simulate(initialRun(scenario, overrides), options);
          // (e) every run terminates, and so does every step
          expect(result.settled).toBe(true);
          const { run } = result;
          if (run.status === 'SUCCEEDED' || run.status === 'FAILED' || run.status === 'CANCELLED')
            seen[run.status]++;
          if (run.error?.code === 'RUN_TIMEOUT') seen.RUN_TIMEOUT++;
          seen.rejectedWrites += result.rejectedWrites;
          seen.reclaims += result.reclaims;
          expect(isTerminalRunStatus(run.status)).toBe(true);
          expect(run.finishedAt).toBeDefined();
          // the document stays a valid contract document with fresh progress
          const checked = validate.flowRun(run);
          expect(checked.ok ? [] : checked.issues).toEqual([]);
          expect(sameProgress(run.progress, computeProgress(run))).toBe(true);
          expect(isEmptyPatch(advance(run, at(10 ** 6)).patch)).toBe(true);
          const statuses = Object.values(run.steps).map((s) => s.status);
          if (run.status === 'SUCCEEDED') {
            expect(statuses.every((s) => s === 'SUCCEEDED' || s === 'SKIPPED')).toBe(true);
            expect(run.error).toBeUndefined();
          } else {
            expect(run.error?.retryable).toBe(false);
          }
          if (run.status === 'FAILED' && run.error?.code !== 'RUN_TIMEOUT') {
            expect(statuses).toContain('FAILED');
          }
          if (!options.cancel && deadlineSeconds === null && crashRate === 0) {
            const failing = Object.values(run.steps).some((s) => s.status === 'FAILED');
            expect(run.status).toBe(failing ? 'FAILED' : 'SUCCEEDED');
          }
        },
      ),
      { numRuns: 300 },
    );
    // the generator must reach every kind of ending and the racy paths, or the checks are vacuous
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(0);
  });

  it('(d): every interleaving of the same outcomes ends in the same run status and step statuses', () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(fc.integer(), { minLength: 3, maxLength: 3 }),
        (scenario, seeds) => {
          const skipped = descendantsOfSkipped(scenario);
          const failing = scenario.dag.names.filter(
            (n) => scenario.outcomes[n]?.status === 'FAILED' && !skipped.has(n),
          );
          const finals = seeds.map(
            (seed) =>
              simulate(initialRun(scenario), {
                outcomes: scenario.outcomes,
                random: seededRandom(seed),
                duplicateRate: 0.3,
              }).run,
          );
          for (const run of finals) {
            // the same final run status, whatever the order
            expect(run.status).toBe(failing.length === 0 ? 'SUCCEEDED' : 'FAILED');
            // the same SKIPPED set: exactly the pre-skipped steps and their descendants
            const skippedNow = Object.entries(run.steps)
              .filter(([, s]) => s.status === 'SKIPPED')
              .map(([id]) => id);
            expect(skippedNow.sort()).toEqual([...skipped].sort());
            for (const [id, step] of Object.entries(run.steps)) {
              if (step.status === 'SUCCEEDED')
                expect(scenario.outcomes[id]?.status).toBe('SUCCEEDED');
              if (step.status === 'FAILED') expect(failing).toContain(id);
            }
            if (failing.length > 0) {
              const failedStep = String(run.error?.details?.['stepId']);
              expect(run.steps[failedStep]?.status).toBe('FAILED');
              expect(run.error?.code).toBe(run.steps[failedStep]?.error?.code);
            }
          }
          if (failing.length === 0) {
            // without failures the per-step outcome is fully determined: identical everywhere
            const expected = Object.fromEntries(
              scenario.dag.names.map((n) => [n, skipped.has(n) ? 'SKIPPED' : 'SUCCEEDED']),
            );
            for (const run of finals) expect(statusesOf(run)).toEqual(expected);
          }
          // Under fail-fast, which concurrently READY steps finish before the failure is seen is a
          // race (as in any fail-fast engine), so with failures only the above is order-independent.
        },
      ),
      { numRuns: 300 },
    );
  });

  it('(c): advance is idempotent and terminal runs are absorbing on arbitrary documents', () => {
    const docArb = dagArbitrary(12).chain((dag) =>
      fc.record({
        dag: fc.constant(dag),
        statuses: fc.array(fc.constantFrom(...STEP_STATUSES), {
          minLength: dag.names.length,
          maxLength: dag.names.length,
        }),
        runStatus: fc.constantFrom(...RUN_STATUSES),
        cancel: fc.boolean(),
        deadline: fc.option(fc.integer({ min: 0, max: 20 })),
        code: fc.constantFrom(...ERROR_CODES),
      }),
    );
    fc.assert(
      fc.property(docArb, ({ dag, statuses, runStatus, cancel, deadline, code }) => {
        const steps = Object.fromEntries(
          dag.names.map((name, i) => {
            const status = statuses[i] ?? 'PENDING';
            return [
              name,
              status === 'FAILED'
                ? {
                    dependsOn: dag.deps[name] ?? [],
                    status,
                    error: { code, message: 'x', retryable: false },
                  }
                : { dependsOn: dag.deps[name] ?? [], status },
            ];
          }),
        );
        const overrides: Partial<FlowRun> = { status: runStatus };
        if (cancel) overrides.cancelRequestedAt = iso(1);
        if (deadline !== null) overrides.deadlineAt = iso(deadline);
        const run = makeRun(steps, overrides);
        const now = at(10);
        const first = advance(run, now);
        const next = applyPatch(run, first.patch);
        expect(advance(next, now).patch).toEqual({});
        expect(deriveRunStatus(next, now)).toBe(next.status);
        // terminal step states never change
        for (const [id, step] of Object.entries(run.steps)) {
          if (isTerminalStepStatus(step.status)) expect(next.steps[id]?.status).toBe(step.status);
        }
        if (isTerminalRunStatus(runStatus)) {
          expect(Object.keys(first.patch).every((k) => k === 'progress')).toBe(true);
          expect(first.runStatus).toBe(runStatus);
        }
        // nothing became READY with an unmet dependency
        for (const id of first.newlyReady) {
          for (const dep of next.steps[id]?.dependsOn ?? [])
            expect(next.steps[dep]?.status).toBe('SUCCEEDED');
        }
        expect(validate.flowRun(next).ok).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});
