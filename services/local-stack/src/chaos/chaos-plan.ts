import { seededRandom } from '@tda/flow-engine/testing';

/**
 * What the chaos suite injects, decided up front from one seed: the same seed gives the same
 * plan (which run gets which fault, on which step, with which delays). Timing between processes
 * is real and therefore not replayable, but every decision the harness takes is.
 */

export const FAULT_KINDS = [
  'worker_killed',
  'duplicate_reorder',
  'orchestrator_crash',
  'conflicting_writer',
  'finalize_write_failed',
  'model_hang',
  'model_bad_output',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const FAULT_LABELS: Readonly<Record<FaultKind, string>> = {
  worker_killed: 'worker process SIGKILLed mid-step',
  duplicate_reorder: 'duplicated + reordered deliveries',
  orchestrator_crash: 'orchestrator dies between READY write and publish',
  conflicting_writer: 'concurrent conflicting writer',
  finalize_write_failed: 'artifact written, finalize write fails',
  model_hang: 'model call hangs',
  model_bad_output: 'malformed model output (repair)',
};

export type Timeframe = '1M' | '1w';

/** Flow 1 (scheduled_month_week_report_v1) for BTC-USDT: its six steps. */
export const FLOW1_STEPS = {
  ohlcv1M: 'ohlcv_export:1M',
  ohlcv1w: 'ohlcv_export:1w',
  charts1M: 'charts:1M:ctpl_default_v1',
  charts1w: 'charts:1w:ctpl_default_v1',
  report1M: 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash',
  report1w: 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash',
} as const;
export const FLOW1_STEP_IDS: readonly string[] = Object.values(FLOW1_STEPS);
export const REPORT_STEP: Readonly<Record<Timeframe, string>> = {
  '1M': FLOW1_STEPS.report1M,
  '1w': FLOW1_STEPS.report1w,
};
/** Steps executed by the in-process workers (their store can be decorated). */
const IN_PROCESS_STEPS = [
  FLOW1_STEPS.ohlcv1M,
  FLOW1_STEPS.ohlcv1w,
  FLOW1_STEPS.charts1M,
  FLOW1_STEPS.charts1w,
] as const;

export type ExpectedStatus = 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
export type KillMoment = 'model_call' | 'before_finalize';

export interface RunPlan {
  index: number;
  /** X-TDA-Owner of the trigger: how the decorators recognise the run before its runId is known. */
  ownerId: string;
  faults: FaultKind[];
  /**
   * worker_killed: the LLM step during which the worker process is killed: while its model call
   * is held (`model_call`), or after it wrote the report artifact, while its finalize write is
   * held (`before_finalize`, the seed-002 split brain).
   */
  kill?: { timeframe: Timeframe; moment: KillMoment };
  /** duplicate_reorder: applied to every step-ready / step-event message of the run. */
  duplicates?: { copies: 1 | 2; maxDelayMs: number };
  /** orchestrator_crash: the READY step whose step-ready publish is lost. */
  crash?: { stepId: string };
  /** conflicting_writer: a rogue writer touching the run document, or a cancel racing the run. */
  writer?: { mode: 'touch'; intervalMs: number } | { mode: 'cancel'; timeframe: Timeframe };
  /** finalize_write_failed: the step whose first `failures` finalize writes fail. */
  finalizeFailure?: { stepId: string; failures: number };
  /** model_hang: transient = the first call hangs; persistent = every call hangs. */
  hang?: { timeframe: Timeframe; mode: 'transient' | 'persistent' };
  /** model_bad_output: the first answer is not JSON; the repair call gets a valid one. */
  badOutput?: { timeframe: Timeframe };
  expected: ExpectedStatus;
}

export interface ChaosPlan {
  seed: number;
  runs: RunPlan[];
}

export interface PlanOptions {
  seed: number;
  runs: number;
  /** Runs whose LLM worker process is killed (run one at a time, after the others). */
  kills: number;
  /** Finalize failures per faulty step: the harness's local tries, so the recovery path runs. */
  finalizeFailures: number;
  ownerPrefix: string;
}

/** A 32-bit FNV-1a hash: stable sub-seeds per run / message from the suite seed. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A PRNG for one named decision stream, independent of the order other streams are used in. */
export function streamRandom(seed: number, name: string): () => number {
  return seededRandom(hash32(`${seed}|${name}`));
}

function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function shuffle<T>(random: () => number, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    const a = out[i];
    const b = out[j];
    if (a === undefined || b === undefined) continue;
    out[i] = b;
    out[j] = a;
  }
  return out;
}

const SHARED_KINDS: readonly FaultKind[] = FAULT_KINDS.filter((k) => k !== 'worker_killed');

/**
 * The plan: `kills` runs get only the worker kill (they run alone, so the killed process holds
 * nothing else); every other run gets a primary fault from a shuffled deck that covers each kind
 * (the writer and the hang twice), plus a second fault half of the time. Exactly one
 * model hang is persistent (that run must end FAILED) and exactly one writer is a cancel (that
 * run must end CANCELLED); every other run must end SUCCEEDED.
 */
export function planChaos(options: PlanOptions): ChaosPlan {
  const random = streamRandom(options.seed, 'plan');
  const shared = options.runs - options.kills;
  if (shared < SHARED_KINDS.length + 2) {
    throw new Error(`a plan needs at least ${SHARED_KINDS.length + 2} runs besides the kills`);
  }
  // The first block holds the writer and the hang twice: their first occurrence becomes the
  // cancel / the persistent hang, the second a touching writer / a transient hang.
  const deck: FaultKind[] = shuffle(random, [...SHARED_KINDS, 'conflicting_writer', 'model_hang']);
  while (deck.length < shared) deck.push(...shuffle(random, SHARED_KINDS));
  const primaries = deck.slice(0, shared);

  const runs: RunPlan[] = [];
  let persistentHang = false;
  let cancelWriter = false;
  for (let index = 0; index < shared; index += 1) {
    const primary = primaries[index] ?? 'duplicate_reorder';
    const run: RunPlan = {
      index,
      ownerId: `${options.ownerPrefix}-r${index}`,
      faults: [primary],
      expected: 'SUCCEEDED',
    };
    // The first writer run is a cancel and the first hang is persistent: those runs end
    // CANCELLED / FAILED and never reach their later steps, so they carry no second fault.
    if (primary === 'conflicting_writer' && !cancelWriter) {
      cancelWriter = true;
      run.writer = { mode: 'cancel', timeframe: pick(random, ['1M', '1w'] as const) };
      run.expected = 'CANCELLED';
    } else if (primary === 'model_hang' && !persistentHang) {
      persistentHang = true;
      run.hang = { timeframe: pick(random, ['1M', '1w'] as const), mode: 'persistent' };
      run.expected = 'FAILED';
    } else if (random() < 0.5) {
      run.faults.push(
        pick(
          random,
          SHARED_KINDS.filter((k) => k !== primary),
        ),
      );
    }
    // Model faults target one report step each; two model faults never share a step.
    const modelTimeframes = shuffle(random, ['1M', '1w'] as const);
    for (const fault of run.faults) {
      switch (fault) {
        case 'duplicate_reorder':
          run.duplicates = {
            copies: random() < 0.5 ? 1 : 2,
            maxDelayMs: 400 + Math.floor(random() * 800),
          };
          break;
        case 'orchestrator_crash':
          run.crash = { stepId: pick(random, FLOW1_STEP_IDS) };
          break;
        case 'conflicting_writer':
          run.writer ??= { mode: 'touch', intervalMs: 100 + Math.floor(random() * 250) };
          break;
        case 'finalize_write_failed':
          run.finalizeFailure = {
            stepId: pick(random, IN_PROCESS_STEPS),
            failures: options.finalizeFailures,
          };
          break;
        case 'model_hang': {
          const timeframe = modelTimeframes.shift() ?? '1M';
          run.hang ??= { timeframe, mode: 'transient' };
          break;
        }
        case 'model_bad_output':
          run.badOutput = { timeframe: modelTimeframes.shift() ?? '1w' };
          break;
        case 'worker_killed':
          break;
      }
    }
    runs.push(run);
  }
  // The kill moments alternate, starting with a seeded one.
  const moments: KillMoment[] = shuffle(random, ['model_call', 'before_finalize'] as const);
  for (let k = 0; k < options.kills; k += 1) {
    const index = shared + k;
    runs.push({
      index,
      ownerId: `${options.ownerPrefix}-r${index}`,
      faults: ['worker_killed'],
      kill: {
        timeframe: pick(random, ['1M', '1w'] as const),
        moment: moments[k % moments.length] ?? 'model_call',
      },
      expected: 'SUCCEEDED',
    });
  }
  return { seed: options.seed, runs };
}
