import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulators, type EmulatorEndpoints } from '@tda/emulators';
import { createFirestore } from '@tda/flow-store';
import { DEPLOYABLE_SERVICES } from '@tda/infra';
import {
  describeMachine,
  fmt,
  machine,
  markdownTable,
  type BenchPart,
  type BenchPartOptions,
  type LatencyStats,
} from '../bench-kit';
import { buildBundles } from './bundle-process';
import { llmStepOverhead, type StepDurationRow } from './llm-overhead';
import {
  apiLoad,
  chartRenders,
  coldStarts,
  firestoreGetFloor,
  type ApiLoad,
  type ChartRow,
  type ColdStartRow,
} from './services-measure';

export interface ServicesData {
  machine: ReturnType<typeof machine>;
  coldStarts: ColdStartRow[];
  api: ApiLoad;
  /** Firestore document reads at the API's client count, same emulator, same run. */
  getFloor: LatencyStats;
  charts: ChartRow[];
  steps: StepDurationRow[];
}

export interface ServicesOptions extends BenchPartOptions {
  endpoints?: EmulatorEndpoints;
}

const CLIENTS = 50;

interface Sizes {
  services: readonly string[];
  tries: number;
  perClient: number;
  chartTries: number;
  reportRuns: number;
}

const FULL: Sizes = {
  services: [...DEPLOYABLE_SERVICES].sort(),
  tries: 3,
  perClient: 20,
  chartTries: 3,
  reportRuns: 8,
};
const SMOKE: Sizes = {
  services: ['orchestrator', 'worker-ohlcv-export'],
  tries: 1,
  perClient: 1,
  chartTries: 1,
  reportRuns: 1,
};

const ms = (value: number): string => value.toFixed(1);

function render(data: ServicesData): string {
  const cold = markdownTable(
    ['bundle', 'ready ms (best)', 'ready ms (each try)', 'idle RSS MiB'],
    data.coldStarts.map((r) => [
      r.service,
      ms(Math.min(...r.readyMs)),
      r.readyMs.map(ms).join(', '),
      fmt(r.idleRssMiB),
    ]),
  );
  const api = markdownTable(
    [
      'route',
      'clients',
      'requests',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'req/s',
      'errors',
      'p50 / Firestore get p50',
    ],
    data.api.rows.map((r) => [
      r.route,
      String(r.clients),
      String(r.requests),
      ms(r.p50),
      ms(r.p90),
      ms(r.p99),
      fmt(r.requestsPerSecond),
      String(r.errors),
      `${(r.p50 / data.getFloor.p50).toFixed(2)}×`,
    ]),
  );
  const charts = markdownTable(
    ['template', 'bars', 'ms per PNG', 'KiB'],
    data.charts.map((r) => [r.template, String(r.bars), ms(r.msPerPng), fmt(r.bytes / 1024)]),
  );
  const steps = markdownTable(
    ['step type', 'steps', 'p50 ms', 'p90 ms', 'p99 ms'],
    data.steps.map((r) => [r.stepType, String(r.steps), ms(r.p50), ms(r.p90), ms(r.p99)]),
  );
  return [
    '### services: production bundles and real handlers',
    '',
    describeMachine(data.machine),
    '',
    'Cold start: `node main.js` of each production bundle (tools/build, NODE_ENV=production) → first 200 on /healthz, against the emulators. Target ≤ 1.5 s for a worker:',
    '',
    cold,
    '',
    `Orchestrator bundle under ${CLIENTS} concurrent clients (POST /runs of market_charts_v1, no workers: the runs stay RUNNING). Floor: a Firestore document read at ${CLIENTS} concurrent loops, p50 ${ms(data.getFloor.p50)} ms, p99 ${ms(data.getFloor.p99)} ms. RSS idle ${fmt(data.api.idleRssMiB)} MiB, under load ${fmt(data.api.loadRssMiB)} MiB:`,
    '',
    api,
    '',
    'Chart render (every default template, 200 daily BTC-USDT candles, best of the tries):',
    '',
    charts,
    '',
    'Step durations (claim → finalize) of user_multi_tf_report_v1 runs in memory, the offline analyst as an instant model: LLM_REPORT is TDA’s own overhead around the model call.',
    '',
    steps,
  ].join('\n');
}

async function measure(endpoints: EmulatorEndpoints, sizes: Sizes): Promise<ServicesData> {
  const outRoot = mkdtempSync(join(tmpdir(), 'tda-bench-bundles-'));
  const firestore = createFirestore({
    projectId: endpoints.projectId,
    emulatorHost: endpoints.firestoreHost,
  });
  try {
    await buildBundles(
      outRoot,
      sizes.services.length === DEPLOYABLE_SERVICES.length ? 'all' : sizes.services,
    );
    const cold = await coldStarts(outRoot, sizes.services, endpoints, sizes.tries);
    const getFloor = await firestoreGetFloor(firestore, CLIENTS, sizes.perClient);
    const api = await apiLoad(outRoot, endpoints, CLIENTS, sizes.perClient);
    return {
      machine: machine(),
      coldStarts: cold,
      api,
      getFloor,
      charts: await chartRenders(sizes.chartTries),
      steps: await llmStepOverhead(sizes.reportRuns),
    };
  } finally {
    await firestore.terminate();
    rmSync(outRoot, { recursive: true, force: true });
  }
}

/** `npm run bench -- services`: cold start, RSS, API latency, chart render, LLM step overhead. */
export async function runServicesBench(options: ServicesOptions): Promise<BenchPart> {
  const started =
    options.endpoints === undefined ? await startEmulators('bench-services') : undefined;
  try {
    const data = await measure(
      options.endpoints ?? (started as EmulatorEndpoints),
      options.smoke ? SMOKE : FULL,
    );
    return { part: 'services', markdown: render(data), data };
  } finally {
    await started?.stop();
  }
}
