import type { FlowRun } from '@tda/contracts';
import { logEvent, type Logger } from '@tda/observability';

/** The `run_created` line of a trigger or a rerun: the run's identity plus what the caller adds. */
export function logRunCreated(
  logger: Logger,
  run: FlowRun,
  extra: Record<string, unknown> = {},
): void {
  logEvent(logger, 'info', 'run_created', {
    runId: run.runId,
    flowKey: run.flowKey,
    ownerId: run.ownerId,
    steps: Object.keys(run.steps).length,
    ...(run.idempotencyKey === undefined ? {} : { idempotencyKey: run.idempotencyKey }),
    ...(run.deadlineAt === undefined ? {} : { deadlineAt: run.deadlineAt }),
    ...extra,
  });
}
