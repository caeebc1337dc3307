import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { Firestore } from '@google-cloud/firestore';
import { ChartRenderer, DEFAULT_CHART_TEMPLATES, type ChartSeriesInput } from '@tda/charts';
import { BundledCandleSource } from '@tda/market-data';
import { latencyStats, type LatencyStats } from '../bench-kit';
import type { EmulatorEndpoints } from '@tda/emulators';
import { rssMiB, startBundle } from './bundle-process';

export interface ColdStartRow {
  service: string;
  /** `node main.js` → first 200 on /healthz, ms, each try. */
  readyMs: number[];
  /** RSS after ready and one idle second, MiB. */
  idleRssMiB: number;
}

const API_TOKEN = 'bench-services-token-0123456789';
const unique = (tag: string): string =>
  `${tag}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** What each bundle needs besides the emulators: a topic prefix of its own, the API token. */
function envFor(service: string): Record<string, string> {
  const env: Record<string, string> = { TDA_PUBSUB_PREFIX: unique('bs') };
  if (service !== 'orchestrator') return env;
  return {
    ...env,
    TDA_API_TOKEN: API_TOKEN,
    TDA_RECONCILE_INTERVAL_MS: '0',
    TDA_SCHEDULE_TICK_MS: '0',
    TDA_MAX_RUNNING_RUNS: '10000',
    TDA_MAX_RUNNING_RUNS_PER_OWNER: '10000',
    TDA_MAX_ACTIVE_RUNS_PER_OWNER: '10000',
  };
}

/** Each bundle started `tries` times, one at a time: time to ready, then its idle RSS. */
export async function coldStarts(
  outRoot: string,
  services: readonly string[],
  emulators: EmulatorEndpoints,
  tries: number,
): Promise<ColdStartRow[]> {
  const rows: ColdStartRow[] = [];
  for (const service of services) {
    const row: ColdStartRow = { service, readyMs: [], idleRssMiB: 0 };
    for (let i = 0; i < tries; i += 1) {
      const bundle = await startBundle(join(outRoot, service), emulators, envFor(service));
      row.readyMs.push(bundle.readyMs);
      await delay(1_000);
      row.idleRssMiB = rssMiB(bundle.child.pid);
      await bundle.stop();
    }
    rows.push(row);
  }
  return rows;
}

export interface ApiLatencyRow extends LatencyStats {
  route: string;
  clients: number;
  requests: number;
  requestsPerSecond: number;
  /** Requests answered with another status than expected. */
  errors: number;
}

/** `clients` loops of `perClient` requests each; latency of every answer. */
async function load(
  route: string,
  clients: number,
  perClient: number,
  request: (client: number) => Promise<Response>,
  expected: number,
): Promise<ApiLatencyRow> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; i < perClient; i += 1) {
        const t0 = performance.now();
        const response = await request(client);
        await response.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (response.status !== expected) errors += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    route,
    clients,
    requests: latencies.length,
    requestsPerSecond: latencies.length / seconds,
    errors,
    ...latencyStats(latencies),
  };
}

export interface ApiLoad {
  rows: ApiLatencyRow[];
  idleRssMiB: number;
  /** Highest RSS sampled (every 100 ms) while the clients ran. */
  loadRssMiB: number;
}

const TRIGGER = { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT', timeframes: ['1h'] } };

/**
 * The orchestrator bundle under `clients` concurrent clients: GET /runs/{id} of one run, then
 * POST /runs of market_charts_v1 (no workers: the runs stay RUNNING, as many as were posted).
 */
export async function apiLoad(
  outRoot: string,
  emulators: EmulatorEndpoints,
  clients: number,
  perClient: number,
): Promise<ApiLoad> {
  const bundle = await startBundle(
    join(outRoot, 'orchestrator'),
    emulators,
    envFor('orchestrator'),
  );
  try {
    const base = `http://127.0.0.1:${bundle.port}`;
    const headers = { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' };
    // The operator token is an admin: X-TDA-Owner acts for another owner.
    const post = (owner?: string) =>
      fetch(`${base}/runs`, {
        method: 'POST',
        headers: owner === undefined ? headers : { ...headers, 'x-tda-owner': owner },
        body: JSON.stringify(TRIGGER),
      });
    const first = (await (await post()).json()) as { runId?: string };
    if (typeof first.runId !== 'string')
      throw new Error(`POST /runs gave no run: ${JSON.stringify(first)}`);
    const idleRssMiB = rssMiB(bundle.child.pid);
    let loadRssMiB = idleRssMiB;
    const sampler = setInterval(
      () => (loadRssMiB = Math.max(loadRssMiB, rssMiB(bundle.child.pid))),
      100,
    );
    try {
      const get = await load(
        'GET /runs/{id}',
        clients,
        perClient,
        () => fetch(`${base}/runs/${first.runId}`, { headers }),
        200,
      );
      const posts = Math.max(1, Math.ceil(perClient / 5));
      // One owner's triggers take turns (the active-runs quota is checked and the run created
      // under the owner's lock); different owners' do not.
      const oneOwner = await load('POST /runs (one owner)', clients, posts, () => post(), 201);
      const owners = await load(
        `POST /runs (${clients} owners)`,
        clients,
        posts,
        (client) => post(`bench-owner-${client}`),
        201,
      );
      return { rows: [get, oneOwner, owners], idleRssMiB, loadRssMiB };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await bundle.stop();
  }
}

/** The floor of GET /runs/{id}: Firestore document reads by `loops` concurrent loops. */
export async function firestoreGetFloor(
  firestore: Firestore,
  loops: number,
  perLoop: number,
): Promise<LatencyStats> {
  const ref = firestore.collection(`bench_get_${Date.now().toString(36)}`).doc('run');
  await ref.set({ n: 0 });
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: loops }, async () => {
      for (let i = 0; i < perLoop; i += 1) {
        const t0 = performance.now();
        await ref.get();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return latencyStats(latencies);
}

export interface ChartRow {
  template: string;
  bars: number;
  msPerPng: number;
  bytes: number;
}

/** Every default chart template on 200 bundled daily BTC-USDT candles: best of `tries` renders. */
export async function chartRenders(tries: number): Promise<ChartRow[]> {
  const fetched = await new BundledCandleSource().fetchCandles({
    symbol: 'BTC-USDT',
    timeframe: '1d',
    limit: 200,
  });
  // The chart worker draws what OHLCV_EXPORT wrote: RFC 3339 open times.
  const series: ChartSeriesInput = {
    symbol: fetched.symbol,
    timeframe: fetched.timeframe,
    candles: fetched.candles.map(({ openTime, open, high, low, close, volume }) => ({
      openTime: new Date(openTime).toISOString(),
      open,
      high,
      low,
      close,
      volume,
    })),
  };
  const renderer = new ChartRenderer();
  const rows: ChartRow[] = [];
  for (const template of DEFAULT_CHART_TEMPLATES) {
    const chart = renderer.bind({ chartTemplateId: template.id });
    const times: number[] = [];
    let last = await renderer.render(chart, series); // warm-up (fonts, JIT)
    for (let i = 0; i < tries; i += 1) {
      const t0 = performance.now();
      last = await renderer.render(chart, series);
      times.push(performance.now() - t0);
    }
    rows.push({
      template: template.id,
      bars: last.bars,
      msPerPng: Math.min(...times),
      bytes: last.bytes,
    });
  }
  return rows;
}
