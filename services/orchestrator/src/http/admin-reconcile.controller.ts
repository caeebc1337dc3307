import { Access } from '../auth/access.decorator';
import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { InvalidRequestError } from '@tda/flow-engine';
import type { OrchestratorConfig } from '../config';
import { ORCHESTRATOR_CONFIG } from '../orchestrator.tokens';
import {
  Reconciler,
  type ReconcilePassOptions,
  type ReconcileReport,
} from '../reconcile/reconciler.service';
import { strictQuery } from '../runs/run-list-query';

const ALLOWED = ['limit', 'artifacts'] as const;

/**
 * `?limit=<runs>&artifacts=true|false` → pass options. Strict like GET /runs: an unknown or
 * repeated parameter is a 400, never silently ignored. `limit` is bounded by
 * TDA_RECONCILE_MAX_RUNS; artifacts defaults to true (the operator asked for a full report).
 */
function parseReconcileQuery(
  raw: Readonly<Record<string, unknown>>,
  maxRuns: number,
): Omit<ReconcilePassOptions, 'mode'> {
  const { limit, artifacts } = strictQuery(raw, ALLOWED);
  const options: Omit<ReconcilePassOptions, 'mode'> = { maxRuns, checkArtifacts: true };
  if (limit !== undefined) {
    const parsed = /^[0-9]{1,5}$/.test(limit) ? Number(limit) : Number.NaN;
    if (!(parsed >= 1 && parsed <= maxRuns)) {
      throw new InvalidRequestError(`limit must be an integer in 1..${maxRuns}`, {
        parameter: 'limit',
        max: maxRuns,
      });
    }
    options.maxRuns = parsed;
  }
  if (artifacts !== undefined) {
    if (artifacts !== 'true' && artifacts !== 'false') {
      throw new InvalidRequestError('artifacts must be true or false', {
        parameter: 'artifacts',
        allowed: ['true', 'false'],
      });
    }
    options.checkArtifacts = artifacts === 'true';
  }
  return options;
}

/**
 * The reconciler on demand (README "Admin: reconcile"). GET is a dry run: the drift report of
 * every RUNNING run with zero writes and zero publishes. POST applies the same decisions (one
 * conditional write per run, step-ready messages) and returns the report with what was done.
 * Missing artifacts are reported, never fixed. Bearer token like every admin route.
 */
@Controller('admin/reconcile')
@Access('admin')
export class AdminReconcileController {
  constructor(
    private readonly reconciler: Reconciler,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_RECONCILE_MAX_RUNS'>,
  ) {}

  @Get()
  dryRun(@Query() query: Record<string, unknown>): Promise<ReconcileReport> {
    const options = parseReconcileQuery(query, this.config.TDA_RECONCILE_MAX_RUNS);
    return this.reconciler.run({ ...options, mode: 'dry_run' });
  }

  @Post()
  @HttpCode(200)
  apply(@Query() query: Record<string, unknown>, @Body() body: unknown): Promise<ReconcileReport> {
    const options = parseReconcileQuery(query, this.config.TDA_RECONCILE_MAX_RUNS);
    // Options are query parameters (the same for GET and POST); a body would be ignored input.
    if (body !== undefined && body !== null && !isEmptyObject(body)) {
      throw new InvalidRequestError(
        'POST /admin/reconcile takes no body; options are query parameters (limit, artifacts)',
        { allowedParameters: [...ALLOWED] },
      );
    }
    return this.reconciler.run({ ...options, mode: 'apply' });
  }
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}
