import { accountExportWorker } from '@tda/service-worker-account-export';
import { backtestWorker } from '@tda/service-worker-backtest';
import { chartExportWorker } from '@tda/service-worker-chart-export';
import { indicatorsOnDemandWorker } from '@tda/service-worker-indicators';
import { llmRecommendationWorker } from '@tda/service-worker-llm-recommendation';
import { llmReportWorker } from '@tda/service-worker-llm-report';
import { newsExportWorker } from '@tda/service-worker-news-export';
import { ohlcvExportWorker } from '@tda/service-worker-ohlcv-export';
import type { AnyWorkerDefinition } from '@tda/worker-kit';

/**
 * The workers `npm start` runs in one process, one per registered step type (a test checks this
 * list against STEP_TYPE_DESCRIPTORS). Each is built from its own WorkerDefinition, exactly as
 * its main.ts builds it.
 */
export const LOCAL_WORKERS: readonly AnyWorkerDefinition[] = [
  ohlcvExportWorker,
  chartExportWorker,
  llmReportWorker,
  llmRecommendationWorker,
  accountExportWorker,
  indicatorsOnDemandWorker,
  newsExportWorker,
  backtestWorker,
];
