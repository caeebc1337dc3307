import { ACCOUNT_EXPORT_STEP } from '@tda/step-types';
import { defineWorker } from '@tda/worker-kit';
import { accountExportConfigSchema } from './config';
import { createAccountExportRuntime, type AccountExportOverrides } from './account-export.factory';

/**
 * The ACCOUNT_EXPORT worker: paper accounts from the account store, the live exchange account
 * when TDA_ACCOUNT_CCXT_* are set, marks from TDA_MARKET_DATA.
 */
export const accountExportWorker = defineWorker({
  descriptor: ACCOUNT_EXPORT_STEP,
  configSchema: accountExportConfigSchema,
  async create(config, { overrides }: { overrides: AccountExportOverrides | undefined }) {
    const runtime = await createAccountExportRuntime(config, overrides);
    return {
      handler: runtime.handler,
      // No secrets: which sources, never keys or balances.
      startedFields: {
        marketData:
          config.TDA_MARKET_DATA === 'ccxt' ? `ccxt:${config.TDA_CCXT_EXCHANGE}` : 'bundled',
        accounts: runtime.exchange === undefined ? 'paper' : `paper+ccxt:${runtime.exchange}`,
        liveToleranceMinutes: config.TDA_ACCOUNT_LIVE_TOLERANCE_MINUTES,
      },
      close: runtime.close,
    };
  },
});
