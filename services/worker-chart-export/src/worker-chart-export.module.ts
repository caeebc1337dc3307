import { Module, type DynamicModule } from '@nestjs/common';
import type { ArtifactStore } from '@tda/artifacts';
import type { FlowRunStore } from '@tda/flow-store';
import type { MessageBroker } from '@tda/messaging';
import type { Logger } from '@tda/observability';
import { WorkerModule, type StepHarnessMetrics, type StepHarnessPolicy } from '@tda/worker-kit';
import type { ChartExportHandler } from './chart-export.handler';

export interface WorkerChartExportModuleOptions {
  /** Built by createChartExportHandler(...) (default templates, bundled font, image limit). */
  handler: ChartExportHandler;
  store: FlowRunStore;
  broker: MessageBroker;
  artifacts: ArtifactStore;
  logger: Logger;
  clock?: () => Date;
  /** Lease owner identity; default worker-kit's `worker/<host>/<pid>/<random>`. */
  owner?: string;
  /** Harness policy (artifact bucket/prefix, timeouts, ...). */
  policy?: Partial<StepHarnessPolicy>;
  metrics?: StepHarnessMetrics;
}

/**
 * The CHART_EXPORT worker: worker-kit's harness around ChartExportHandler. Takes built adapter
 * instances, so main.ts, the local all-in-one launcher and tests compose it the same way.
 */
@Module({})
export class WorkerChartExportModule {
  static forRoot(options: WorkerChartExportModuleOptions): DynamicModule {
    return {
      module: WorkerChartExportModule,
      imports: [
        WorkerModule.forRoot({
          handlers: [options.handler],
          store: options.store,
          broker: options.broker,
          artifacts: options.artifacts,
          logger: options.logger,
          stepTypes: ['CHART_EXPORT'],
          ...(options.clock === undefined ? {} : { clock: options.clock }),
          ...(options.owner === undefined ? {} : { owner: options.owner }),
          ...(options.policy === undefined ? {} : { policy: options.policy }),
          ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
        }),
      ],
    };
  }
}
