import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

/** One part of `npm run bench`: a Markdown report and the same numbers as JSON. */
export interface BenchPart {
  part: string;
  markdown: string;
  data: unknown;
}

export interface BenchPartOptions {
  /** Tiny sizes: checks the wiring in seconds (the smoke spec), measures nothing. */
  smoke: boolean;
}

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  loadavg1m: number;
  /**
   * JSON round trips of one small object per second, on one core, right now: the speed of a
   * shared VM moves by tens of per cent within an hour, so two runs compare only next to it.
   */
  jsonRoundTripsPerSecond: number;
}

export function machine(): Machine {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    node: process.version,
    loadavg1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    jsonRoundTripsPerSecond: jsonRoundTripsPerSecond(),
  };
}

const CALIBRATION = { a: [1, 2, 3], b: { c: 'x'.repeat(50), d: [{ e: 1 }, { f: 2 }] } };

/** The best of five 60 ms windows of JSON.parse(JSON.stringify(CALIBRATION)). */
function jsonRoundTripsPerSecond(): number {
  let best = 0;
  for (let window = 0; window < 5; window += 1) {
    const started = performance.now();
    let done = 0;
    while (performance.now() - started < 60) {
      for (let i = 0; i < 1000; i += 1) JSON.parse(JSON.stringify(CALIBRATION));
      done += 1000;
    }
    best = Math.max(best, done / ((performance.now() - started) / 1000));
  }
  return Math.round(best);
}

/** The "Machine:" line every part prints first. */
export function describeMachine(host: Machine): string {
  const speed = `${Math.round(host.jsonRoundTripsPerSecond / 1000)}k JSON round trips/s`;
  return `Machine: ${host.cpu}, ${host.cores} cores, Node ${host.node}, load ${host.loadavg1m}, CPU speed ${speed} (compare runs next to it).`;
}

/** Seconds taken by `run`. */
export async function seconds(run: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export interface Timings {
  best: number;
  median: number;
}

/**
 * Times each of `runs` `reps` times, alternating them (after one untimed warm-up round: the JIT
 * compiles first), and returns the best and median seconds of each.
 */
export async function interleaved(reps: number, runs: (() => unknown)[]): Promise<Timings[]> {
  for (const run of runs) await run();
  const times = runs.map((): number[] => []);
  for (let i = 0; i < reps; i++) {
    for (const [k, run] of runs.entries()) times[k]?.push(await seconds(run));
  }
  return times.map((list) => {
    const sorted = [...list].sort((a, b) => a - b);
    return { best: sorted[0] as number, median: sorted[Math.floor(sorted.length / 2)] as number };
  });
}

/** A Markdown table; every row has one cell per header. */
export function markdownTable(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

/** 12345678 → "12.3 M"; 12345 → "12,345". */
export function fmt(value: number, digits = 1): string {
  if (value >= 1e6) return `${(value / 1e6).toFixed(digits)} M`;
  return Math.round(value).toLocaleString('en-US');
}

export interface LatencyStats {
  p50: number;
  p90: number;
  p99: number;
}

/** Nearest-rank percentiles of `values` (e.g. milliseconds); 0s for an empty list. */
export function latencyStats(values: readonly number[]): LatencyStats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted.length === 0
      ? 0
      : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

/** Every number in a JSON value by its path (`firestore.0.p50`), for comparing two runs. */
export function numericLeaves(value: unknown, path = ''): Map<string, number> {
  const leaves = new Map<string, number>();
  if (typeof value === 'number') leaves.set(path, value);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      for (const [p, n] of numericLeaves(child, childPath)) leaves.set(p, n);
    }
  }
  return leaves;
}

/** `--compare a.json b.json`: each number of both runs side by side, with b / a. */
export function compareRuns(a: unknown, b: unknown): string {
  const left = numericLeaves(a);
  const right = numericLeaves(b);
  const rows = [...left.entries()]
    .filter(([path]) => right.has(path))
    .map(([path, x]) => {
      const y = right.get(path) as number;
      const shown = (n: number): string => String(Number(n.toPrecision(4)));
      return [path, shown(x), shown(y), x === 0 ? '—' : `${(y / x).toFixed(2)}×`];
    });
  return markdownTable(['figure', 'a', 'b', 'b / a'], rows);
}

/** Where the machine's CPU went while `run` ran: this process, and every process together. */
export interface CpuUse {
  /** CPU seconds of this process (user + system), every thread. */
  processSeconds: number;
  /**
   * CPU seconds of the main thread: the local stack's event loop ("one core"), without the
   * bench's client (its own thread) or V8's and libuv's helper threads.
   */
  mainThreadSeconds: number;
  /** Busy CPU seconds of the whole machine (all cores, /proc/stat; 0 where there is none). */
  machineSeconds: number;
  /** Wall seconds. */
  wallSeconds: number;
}

function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    return (total - idle) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0;
  }
}

/** Runs `run` and says how much CPU it took, here and machine-wide (the emulators included). */
export async function withCpu<T>(run: () => Promise<T>): Promise<{ result: T; cpu: CpuUse }> {
  const process0 = process.cpuUsage();
  const thread0 = process.threadCpuUsage();
  const machine0 = machineBusySeconds();
  const wall0 = performance.now();
  const result = await run();
  const used = process.cpuUsage(process0);
  const thread = process.threadCpuUsage(thread0);
  return {
    result,
    cpu: {
      processSeconds: (used.user + used.system) / 1e6,
      mainThreadSeconds: (thread.user + thread.system) / 1e6,
      machineSeconds: machineBusySeconds() - machine0,
      wallSeconds: (performance.now() - wall0) / 1000,
    },
  };
}
