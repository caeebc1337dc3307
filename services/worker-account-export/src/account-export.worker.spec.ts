import 'reflect-metadata';
import { InMemoryAccountStore, ensureDemoAccount } from '@tda/accounts';
import {
  makeNewAccount,
  RECORDED_API_KEY,
  RECORDED_SECRET,
  recordedAccountExchange,
  RequestTimeout,
} from '@tda/accounts/testing';
import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import type { FlowRun } from '@tda/contracts';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { createMemoryLogger } from '@tda/observability';
import { bootstrapWorker } from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccountExportOverrides } from './account-export.factory';
import { accountExportWorker } from './account-export.worker';
import { HOUR, recordedMarket, T } from './testing/recorded-market';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const STEP_ID = 'account_export';
/** Balances of the recorded exchange account: none of them may leave the artifact. */
const BALANCES = ['1034.5678', '1234.5678'];

function loadAccountConfig(env: EnvSource) {
  return loadConfig(accountExportWorker.descriptor.service, accountExportWorker.configSchema, env);
}

function runWithAccountStep(accountId: string, asOf: string): FlowRun {
  return makeFlowRun({
    status: 'RUNNING',
    ownerId: 'local-user',
    scope: { symbol: 'BTC-USDT', asOf },
    steps: {
      [STEP_ID]: makeStep({
        stepType: 'ACCOUNT_EXPORT',
        status: 'READY',
        inputs: { accountId, symbol: 'BTC-USDT' },
      }),
    },
  });
}

async function boot(extraEnv: Record<string, string>, overrides: AccountExportOverrides) {
  const memory = await memoryWorkerEnv({ TDA_STEP_RETRY_TRIES: '1', ...extraEnv });
  cleanups.push(() => memory.cleanup());
  const log = createMemoryLogger({ service: 'worker-account-export', level: 'debug' });
  const handle = await bootstrapWorker(accountExportWorker, {
    env: memory.env,
    logger: log.logger,
    overrides,
  });
  cleanups.push(() => handle.close());
  const run = async (flowRun: FlowRun) => {
    await handle.backends.store.create(flowRun);
    return deliverStep(handle, {
      runId: flowRun.runId,
      stepId: STEP_ID,
      stepType: 'ACCOUNT_EXPORT',
    });
  };
  return { handle, log, run };
}

describe('accountExportWorker config', () => {
  it('paper accounts only by default, 75 min live tolerance, bundled marks', () => {
    expect(loadAccountConfig({})).toMatchObject({
      TDA_MARKET_DATA: 'bundled',
      TDA_ACCOUNT_CCXT_POSITIONS: 'auto',
      TDA_ACCOUNT_LIVE_TOLERANCE_MINUTES: 75,
    });
  });

  it('a partial exchange configuration names what is missing, never the values given', () => {
    let error: unknown;
    try {
      loadAccountConfig({
        TDA_ACCOUNT_CCXT_EXCHANGE: 'binance',
        TDA_ACCOUNT_CCXT_SECRET: RECORDED_SECRET,
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/TDA_ACCOUNT_CCXT_API_KEY/);
    expect(JSON.stringify({ message: (error as Error).message, error })).not.toContain(
      RECORDED_SECRET,
    );
  });
});

describe('accountExportWorker (booted, memory backend)', () => {
  it('exports the demo paper account of the run’s owner', async () => {
    const accounts = new InMemoryAccountStore();
    await ensureDemoAccount(accounts, 'local-user');
    const { handle, log, run } = await boot({}, { accounts });
    const step = await run(runWithAccountStep('demo', '2026-09-20T00:00:00Z'));
    expect(step.status).toBe('SUCCEEDED');
    const snapshot = JSON.parse(
      (await handle.backends.artifacts.read(step.outputs.gcs_uri ?? '')).toString('utf8'),
    ) as { equity: number; accountId: string };
    expect(snapshot).toMatchObject({ accountId: 'demo', equity: 10812.4999 });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      accounts: 'paper',
      marketData: 'bundled',
      stepType: 'ACCOUNT_EXPORT',
    });
  });

  it('a live account: credentials and balances appear in no log line, error or outputs.execution', async () => {
    const accounts = new InMemoryAccountStore();
    await accounts.create(
      makeNewAccount({
        accountId: 'live',
        ownerId: 'local-user',
        exchange: 'binance',
        cash: 0,
        positions: [],
      }),
    );
    const secrets = {
      TDA_MARKET_DATA: 'ccxt',
      TDA_ACCOUNT_CCXT_EXCHANGE: 'binance',
      TDA_ACCOUNT_CCXT_API_KEY: RECORDED_API_KEY,
      TDA_ACCOUNT_CCXT_SECRET: RECORDED_SECRET,
    };
    const now = () => T + 2 * HOUR + 40 * 60_000;
    const ok = await boot(secrets, {
      accounts,
      accountExchange: recordedAccountExchange(),
      marketExchange: recordedMarket,
      now,
    });
    const succeeded = await ok.run(runWithAccountStep('live', '2026-09-20T10:00:00Z'));
    expect(succeeded.status).toBe('SUCCEEDED');
    expect(ok.log.withEvent('service_started')[0]).toMatchObject({
      accounts: 'paper+ccxt:binance',
    });

    const leaky = `GET /api/v3/account?signature=${RECORDED_SECRET}&apiKey=${RECORDED_API_KEY}`;
    const down = await boot(secrets, {
      accounts,
      accountExchange: recordedAccountExchange({ failWith: new RequestTimeout(leaky) }),
      marketExchange: recordedMarket,
      now,
    });
    const failed = await down.run(runWithAccountStep('live', '2026-09-20T10:00:00Z'));
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });

    const shown = JSON.stringify([
      ok.log.records,
      down.log.records,
      succeeded.outputs.execution,
      failed.error,
      failed.outputs,
    ]);
    for (const needle of [RECORDED_SECRET, RECORDED_API_KEY, ...BALANCES]) {
      expect(shown).not.toContain(needle);
    }
    // The artifact, and only it, holds the balances.
    const artifact = (
      await ok.handle.backends.artifacts.read(succeeded.outputs.gcs_uri ?? '')
    ).toString();
    expect(artifact).toContain('1034.5678');
  });
});
