import 'reflect-metadata';
import { appendFileSync } from 'node:fs';
import { createBackends } from '@tda/backends';
import { loadConfig } from '@tda/config';
import type { Logger } from '@tda/observability';
import { runServiceMain } from '@tda/service-runtime';
import { llmReportWorker } from '@tda/service-worker-llm-report';
import { LLM_REPORT_STEP } from '@tda/step-types';
import { bootstrapWorker } from '@tda/worker-kit';
import { z } from 'zod';
import { FinalizeHoldingStore } from './chaos-store';
import { countingHandler, type ExecutionRecord } from './counting-handler';

const SERVICE = LLM_REPORT_STEP.service;

/**
 * The LLM_REPORT worker as a separate process for the chaos suite, so that it can really be
 * SIGKILLed in the middle of a step. Built from the worker's own definition (llmReportWorker,
 * through bootstrapWorker like its main.ts), plus what a test needs:
 * timings short enough for a lease to expire and a model call to time out within the test (the
 * service takes its lease and the pipeline's backoff from code defaults, not from its env), and
 * a record of every handler call appended to a file, which survives the kill.
 *
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/local-stack/src/chaos/chaos-llm-worker.main.ts`
 */
const chaosWorkerSchema = z.object({
  TDA_CHAOS_EXECUTIONS_FILE: z.string().min(1),
  TDA_CHAOS_LEASE_MS: z.coerce.number().int().positive(),
  TDA_CHAOS_HEARTBEAT_MS: z.coerce.number().int().positive(),
  TDA_CHAOS_STEP_TIMEOUT_MS: z.coerce.number().int().positive(),
  TDA_CHAOS_RETRY_BASE_DELAY_MS: z.coerce.number().int().min(0),
  TDA_CHAOS_REQUEST_DEADLINE_MS: z.coerce.number().int().positive(),
  TDA_CHAOS_FINALIZE_BUDGET_MS: z.coerce.number().int().positive(),
  TDA_CHAOS_MIN_REPAIR_WINDOW_MS: z.coerce.number().int().min(0),
  /** JSON [{ownerId, stepId}]: finalize writes this process holds until it is killed. */
  TDA_CHAOS_HOLD_FINALIZE: z
    .string()
    .default('[]')
    .transform((text, ctx) => {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const parsed = z
        .array(z.object({ ownerId: z.string().min(1), stepId: z.string().min(1) }))
        .safeParse(json);
      if (parsed.success) return parsed.data;
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {ownerId, stepId}' });
      return z.NEVER;
    }),
});

async function boot(): Promise<{ logger: Logger; close(): Promise<void> }> {
  const chaos = loadConfig('chaos-llm-worker', chaosWorkerSchema);
  const record = (entry: ExecutionRecord): void =>
    appendFileSync(chaos.TDA_CHAOS_EXECUTIONS_FILE, `${JSON.stringify(entry)}\n`);
  const handle = await bootstrapWorker(llmReportWorker, {
    policy: {
      leaseMs: chaos.TDA_CHAOS_LEASE_MS,
      heartbeatMs: chaos.TDA_CHAOS_HEARTBEAT_MS,
      timeoutMs: chaos.TDA_CHAOS_STEP_TIMEOUT_MS,
      handlerRetryBaseDelayMs: chaos.TDA_CHAOS_RETRY_BASE_DELAY_MS,
    },
    overrides: {
      runtime: {
        requestDeadlineMs: chaos.TDA_CHAOS_REQUEST_DEADLINE_MS,
        finalizeBudgetMs: chaos.TDA_CHAOS_FINALIZE_BUDGET_MS,
        policy: {
          baseDelayMs: chaos.TDA_CHAOS_RETRY_BASE_DELAY_MS,
          minRepairWindowMs: chaos.TDA_CHAOS_MIN_REPAIR_WINDOW_MS,
        },
      },
    },
    decorate: (handler) => countingHandler(handler, SERVICE, record),
    // The real adapters; the store holds the planned finalize writes (none by default).
    createBackends: async (config) => {
      const backends = await createBackends(config);
      const holds = chaos.TDA_CHAOS_HOLD_FINALIZE;
      if (holds.length === 0) return backends;
      const held = (runId: string, stepId: string, uri: string | undefined): void =>
        record({
          pid: process.pid,
          service: SERVICE,
          runId,
          stepId,
          attempt: 0,
          phase: 'finalize_held',
          at: Date.now(),
          ...(uri === undefined ? {} : { uri }),
        });
      return { ...backends, store: new FinalizeHoldingStore(backends.store, holds, held) };
    },
  });
  return handle;
}

void runServiceMain({ service: SERVICE, boot });
