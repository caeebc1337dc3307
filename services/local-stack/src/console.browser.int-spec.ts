import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type { FlowRun } from '@tda/contracts';
import { ApiClient } from '@tda/service-cli';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_OUT_DIR } from './console-build';
import { startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';
import { StepScript } from './testing/scripted-handler';

/**
 * The console in a real browser (Debian's chromium through playwright-core) against the real
 * stack on the emulators. Screenshots of the key pages go to tmp/screenshots/console (not
 * committed) so a person can look at them.
 */
const REPO = resolve(__dirname, '../../..');
const SHOTS = resolve(REPO, 'tmp/screenshots/console');
const CHROMIUM = '/usr/bin/chromium';

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

describe('the console in chromium', () => {
  const script = new StepScript({
    hold: (stepId) => stepId === 'ohlcv_export:4h',
    failOnce: (stepId) => stepId === 'ohlcv_export:1h',
  });
  let e2e: E2eStack;
  /** The first stack's project: a restart comes back on the same data (tokens, runs). */
  let projectId: string | undefined;
  let port: number;
  let browser: Browser;
  const tokens = { alice: '', bob: '' };
  const contexts: BrowserContext[] = [];
  let base = '';

  const start = async (): Promise<E2eStack> => {
    const started = await startE2eStack({
      name: 'console',
      ...(projectId === undefined ? {} : { projectId }),
      env: { PORT: String(port), TDA_CONSOLE_DIR: resolve(REPO, CONSOLE_OUT_DIR) },
      hooks: { handler: (handler) => script.wrap(handler) },
    });
    projectId = started.projectId;
    return started;
  };
  const createToken = async (ownerId: string): Promise<string> => {
    const res = await fetch(`${base}/admin/tokens`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${e2e.stack.adminToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ ownerId, role: 'user', name: `${ownerId} (browser test)` }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { token: string }).token;
  };
  const trigger = async (token: string, body: object): Promise<FlowRun> => {
    const res = await fetch(`${base}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as FlowRun;
  };
  const signedIn = async (token: string, path = '/'): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${base}${path}`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    return page;
  };
  /** The API as alice: the operator (local-user) would get a 404 for her runs. */
  const asAlice = () => new ApiClient({ baseUrl: base, token: tokens.alice });
  /** The step nodes of the DAG (the timeline lists the steps too). */
  const graph = (page: Page) => page.getByRole('group', { name: 'Step graph' });
  const runBadge = (page: Page, status: string) =>
    page.locator('.run-status-col .badge', { hasText: status });
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    port = await freePort();
    e2e = await start();
    base = e2e.stack.url;
    tokens.alice = await createToken('alice');
    tokens.bob = await createToken('bob');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 120_000);
  afterAll(async () => {
    script.release();
    for (const context of contexts) await context.close();
    await browser.close();
    await e2e.stack.close();
  });

  it('shows a visitor without a token the sign-in page, and no data', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${base}/runs`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await shot(page, 'sign-in-phone');
  });

  it('triggers a run from the generated form and watches the DAG turn green without reloading', async () => {
    const page = await signedIn(tokens.alice);
    await page.getByRole('link', { name: 'Trigger', exact: true }).click();
    await page.getByRole('radio', { name: /market_charts_v1/ }).click();
    await page.getByLabel(/Symbol/).fill('BTC-USDT');
    await page.getByRole('checkbox', { name: '1d' }).check();
    await page.getByRole('button', { name: 'Trigger run' }).click();
    await page.waitForURL(/\/runs\/[^/?]+/);
    await page.evaluate(() => {
      (window as unknown as { loadedOnce: boolean }).loadedOnce = true;
    });
    await runBadge(page, 'Succeeded').waitFor({ timeout: 30_000 });
    const nodes = graph(page).getByRole('button', { name: /^Step / });
    const count = await nodes.count();
    expect(count).toBeGreaterThanOrEqual(4);
    await expect
      .poll(() =>
        graph(page)
          .getByRole('button', { name: /^Step .*: Succeeded/ })
          .count(),
      )
      .toBe(count);
    expect(
      await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce),
    ).toBe(true);
    await shot(page, 'run-succeeded');
  }, 60_000);

  it('opens a chart (PNG inline) and a report (rendered markdown with the model metadata)', async () => {
    const charts = await trigger(tokens.alice, {
      flowKey: 'market_charts_v1',
      scope: { symbol: 'ETH-USDT', timeframes: ['1d'] },
    });
    const report = await trigger(tokens.alice, {
      flowKey: 'user_multi_tf_report_v1',
      scope: { symbol: 'BTC-USDT', timeframes: ['1d'] },
    });
    await waitForRunStatus(asAlice(), charts.runId, 'SUCCEEDED');
    await waitForRunStatus(asAlice(), report.runId, 'SUCCEEDED');
    const page = await signedIn(tokens.alice, `/runs/${charts.runId}`);
    await graph(page)
      .getByRole('button', { name: /^Step charts:1d/ })
      .click();
    const image = page.locator('img[src^="blob:"]').first();
    await image.waitFor({ timeout: 15_000 });
    await expect
      .poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBeGreaterThan(200);
    await shot(page, 'run-chart');
    await page.goto(`${base}/runs/${report.runId}`);
    await graph(page)
      .getByRole('button', { name: /^Step llm_report:1d/ })
      .click();
    await page.getByText('Key levels').first().waitFor({ timeout: 15_000 });
    await page.getByRole('region', { name: 'Model' }).first().waitFor();
    await shot(page, 'run-report');
  }, 60_000);

  it('cancels a running run after confirmation', async () => {
    const run = await trigger(tokens.alice, {
      flowKey: 'market_charts_v1',
      scope: { symbol: 'BTC-USDT', timeframes: ['4h'] },
    });
    const page = await signedIn(tokens.alice, `/runs/${run.runId}`);
    // The worker holds the step first (a slow claim on a loaded machine is not the page's fault);
    // from then on the page must show it running without a reload.
    await expect
      .poll(() => script.held.has(`${run.runId}/ohlcv_export:4h`), { timeout: 40_000 })
      .toBe(true);
    await page
      .getByRole('button', { name: /^Step ohlcv_export:4h: Running/ })
      .waitFor({ timeout: 20_000 });
    await page
      .getByRole('group', { name: 'Run actions' })
      .getByRole('button', { name: 'Cancel run' })
      .click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this run?' });
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    await runBadge(page, 'Cancelled').waitFor({ timeout: 20_000 });
    await waitForRunStatus(asAlice(), run.runId, 'CANCELLED');
    await shot(page, 'run-cancelled');
  }, 90_000);

  it('retries a failed step and the run succeeds', async () => {
    const run = await trigger(tokens.alice, {
      flowKey: 'market_charts_v1',
      scope: { symbol: 'BTC-USDT', timeframes: ['1h'] },
    });
    await waitForRunStatus(asAlice(), run.runId, 'FAILED');
    const page = await signedIn(tokens.alice, `/runs/${run.runId}`);
    await graph(page)
      .getByRole('button', { name: /^Step ohlcv_export:1h: Failed/ })
      .click();
    await shot(page, 'run-failed');
    await page.getByRole('button', { name: 'Retry step' }).click();
    await page
      .getByRole('dialog', { name: 'Retry this step?' })
      .getByRole('button', { name: 'Retry step' })
      .click();
    await runBadge(page, 'Succeeded').waitFor({ timeout: 30_000 });
  }, 60_000);

  it('creates a schedule from the form, shows its fire times, refuses firing past the data, pauses; a scheduled run shows its schedule', async () => {
    const page = await signedIn(tokens.alice, '/schedules');
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.locator('#schedule-flow').selectOption('market_charts_v1');
    await page.locator('#field-symbol').fill('BTC-USDT');
    await page.locator('#schedule-cron').fill('0 * * * *');
    await page.locator('#schedule-tz').fill('Europe/London');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.waitForURL(/\/schedules\/sch_[a-z0-9]{20}$/);
    const scheduleId = page.url().split('/').pop() ?? '';
    const times = page.getByRole('list', { name: 'Next fire times' }).getByRole('listitem');
    await expect.poll(() => times.count()).toBe(5);
    await shot(page, 'schedule');
    // The bundled data ends in 2026-09: a slot now has no candles, and the console says so.
    await page.getByRole('button', { name: `Fire schedule ${scheduleId} now` }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /outside|asOf/ })
      .waitFor();
    await page.getByRole('button', { name: `Pause schedule ${scheduleId}` }).click();
    await page.getByRole('button', { name: `Resume schedule ${scheduleId}` }).waitFor();

    // A past slot the data reaches, fired through the API (backfill): its run names the schedule.
    const fired = await asAlice().fireSchedule(scheduleId, '2026-09-19T12:00:00Z');
    await waitForRunStatus(asAlice(), fired.runId, 'SUCCEEDED', 60_000);
    await page.goto(`${base}/runs/${fired.runId}`);
    await page.getByRole('link', { name: scheduleId }).waitFor();
    await page.getByText('No signal').waitFor();
    await shot(page, 'scheduled-run');
    await page.goto(`${base}/signals`);
    await page.getByRole('heading', { name: 'Signals' }).waitFor();
    await shot(page, 'signals');
  });

  it("shows a second owner none of the first owner's runs", async () => {
    const run = await trigger(tokens.alice, {
      flowKey: 'market_charts_v1',
      scope: { symbol: 'ETH-USDT', timeframes: ['1w'] },
    });
    const page = await signedIn(tokens.bob);
    await page.getByText('No runs yet').waitFor({ timeout: 15_000 });
    await page.goto(`${base}/runs/${run.runId}`);
    await page.getByText('NOT_FOUND').first().waitFor();
    await shot(page, 'second-owner');
  }, 60_000);

  it('resumes the live stream after the orchestrator restarts', async () => {
    const page = await signedIn(tokens.alice);
    await page.getByRole('status', { name: /Updates: Live/ }).waitFor({ timeout: 15_000 });
    script.release();
    await e2e.stack.close();
    await page
      .getByRole('status', { name: /Updates: (Polling|Connecting)/ })
      .waitFor({ timeout: 30_000 });
    e2e = await start();
    await page.getByRole('status', { name: /Updates: Live/ }).waitFor({ timeout: 30_000 });
    const run = await trigger(tokens.alice, {
      flowKey: 'market_charts_v1',
      scope: { symbol: 'BTC-USDT', timeframes: ['1d'] },
    });
    await page.getByRole('link', { name: run.runId }).waitFor({ timeout: 15_000 });
    await shot(page, 'runs-after-restart');
  }, 120_000);

  it('lists a backtest job and shows its stages, top variants, a report table and trades', async () => {
    // 9 base variants (fast < slow) × 4 executions: seconds on the bundled BTCUSDT 1h candles.
    const { job } = await asAlice().createBacktestJob({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      asOf: '2026-09-20T00:00:00Z',
      bars: 2_000,
      strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [5, 10, 20], slow: [30, 50, 100] } },
      execution: { direction: ['long_only', 'long_short'], stopLossPct: [0, 2] },
      top_k: 5,
      preselect: 9,
      top_trades_n: 2,
    });
    const page = await signedIn(tokens.alice, '/backtests');
    await page.getByRole('heading', { name: 'Backtests' }).waitFor();
    await page.getByRole('link', { name: job.job_id }).click();
    await page.waitForURL(/\/backtests\/[^/?]+$/);
    await page.getByRole('progressbar', { name: 'Stage B progress' }).waitFor();
    await runBadge(page, 'Succeeded').waitFor({ timeout: 60_000 });
    await expect
      .poll(() =>
        page
          .getByRole('progressbar', { name: 'Finalizing progress' })
          .getAttribute('aria-valuetext'),
      )
      .toMatch(/100%/);
    const top = page.getByRole('table', { name: 'Top variants by total return' });
    await expect.poll(() => top.locator(':scope > tbody > tr:not(.details-row)').count()).toBe(5);
    // The best variant is expanded: its report table rendered, and its trades.
    const report = page.getByRole('table', { name: 'Report of variant 1' });
    await report.getByRole('rowheader', { name: 'total_return_pct' }).waitFor();
    const trades = page.getByRole('table', { name: 'Trades of variant 1' });
    expect(await trades.locator('tbody tr').count()).toBeGreaterThan(0);
    await shot(page, 'backtest-job');
    await page.getByRole('link', { name: 'Backtests', exact: true }).first().click();
    await page
      .getByRole('table', { name: /backtest jobs/ })
      .getByText('Succeeded')
      .first()
      .waitFor();
    await shot(page, 'backtests');
  }, 120_000);
});
