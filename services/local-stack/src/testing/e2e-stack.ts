import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowRun } from '@tda/contracts';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { ApiClient } from '@tda/service-cli';
import { emulatorEndpoints, expectEventually, uniqueName } from '@tda/test-support';
import { expect } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackHooks } from '../local-stack';

export interface E2eStack {
  stack: LocalStack;
  api: ApiClient;
  /** Every service's log records (one memory logger for the whole stack). */
  logs: MemoryLogger;
  /** The stack's own Pub/Sub prefix (subscription names for replays, direct publishes). */
  prefix: string;
  /** The stack's Firestore/Pub/Sub project on the emulators (its own unless one was given). */
  projectId: string;
}

export interface StartE2eStackOptions {
  /** Short name: the Pub/Sub prefix, the temp data dir and the log service derive from it. */
  name: string;
  /** Variables over the defaults (e.g. the Gemini key and base URL, TDA_MAX_RUNNING_RUNS). */
  env?: Record<string, string>;
  logLevel?: 'info' | 'warn';
  /**
   * The Firestore/Pub/Sub project on the shared emulators. Default: one of its own, named like
   * the prefix, so that no other test file's stack ever meets this one's runs — admission, for
   * one, admits the oldest queued run of the whole collection and would dispatch another file's
   * run to its own workers. Give the projectId of an earlier stack to restart on its data.
   */
  projectId?: string;
  /** Test hooks of the local stack (wrapped handlers, ...). */
  hooks?: LocalStackHooks;
}

/**
 * The local stack as `npm start` composes it, on the emulators of the integration global setup,
 * with what every e2e file needs: a project and a Pub/Sub prefix of its own, no reconciler
 * unless asked, a fresh data dir, an API client.
 */
export async function startE2eStack(options: StartE2eStackOptions): Promise<E2eStack> {
  const prefix = uniqueName(options.name);
  const logs = createMemoryLogger({ service: options.name, level: options.logLevel ?? 'info' });
  const emulators = emulatorEndpoints();
  const projectId = options.projectId ?? prefix;
  const stack = await startLocalStack({
    env: {
      TDA_BACKEND: 'emulators',
      PORT: '0',
      TDA_DATA_DIR: mkdtempSync(join(tmpdir(), `tda-${options.name}-`)),
      TDA_PUBSUB_PREFIX: prefix,
      TDA_RECONCILE_INTERVAL_MS: '0',
      ...options.env,
    },
    loggerFor: () => logs.logger,
    emulators: { ...emulators, projectId },
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  });
  return {
    stack,
    logs,
    prefix,
    projectId,
    api: new ApiClient({ baseUrl: stack.url, token: stack.token }),
  };
}

/** How many times each step of the run was claimed (executed), from the step_claimed lines. */
export function claimsOf(logs: MemoryLogger, runId: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of logs.withEvent('step_claimed')) {
    if (record['runId'] !== runId) continue;
    const stepId = String(record['stepId']);
    counts[stepId] = (counts[stepId] ?? 0) + 1;
  }
  return counts;
}

const TERMINAL = new Set<FlowRun['status']>(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/**
 * Polls the run until it has `status`. A run that ends in another terminal status ends the wait
 * at once, with the step errors in the message.
 */
export async function waitForRunStatus(
  api: ApiClient,
  runId: string,
  status: FlowRun['status'],
  timeoutMs = 60_000,
): Promise<FlowRun> {
  const run = await expectEventually(
    async () => {
      const current = await api.getRun(runId);
      if (!TERMINAL.has(current.status)) expect(current.status).toBe(status);
      return current;
    },
    { timeoutMs, intervalMs: 150 },
  );
  if (run.status !== status) {
    const errors = Object.entries(run.steps)
      .filter(([, s]) => s.error !== undefined)
      .map(([id, s]) => `${id}: ${s.error?.code} ${s.error?.message}`);
    throw new Error(`run ended ${run.status}, expected ${status}: ${errors.join('; ')}`);
  }
  return run;
}
