import { NEWS_EXPORT_STEP } from '@tda/step-types';
import { defineWorker } from '@tda/worker-kit';
import { newsExportConfigSchema } from './config';
import {
  createNewsExportHandler,
  newsSourcesSummary,
  type NewsExportOverrides,
} from './news-export.factory';

/** The NEWS_EXPORT worker: headlines from TDA_NEWS_PROVIDER (none by default). */
export const newsExportWorker = defineWorker({
  descriptor: NEWS_EXPORT_STEP,
  configSchema: newsExportConfigSchema,
  create(config, { overrides }: { overrides: NewsExportOverrides | undefined }) {
    return {
      handler: createNewsExportHandler(config, overrides),
      startedFields: newsSourcesSummary(config),
    };
  },
});
