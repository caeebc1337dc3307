/*
 * GENERATED from the orchestrator's OpenAPI document (buildOpenApiDocument) by openapi-typescript.
 * Do not edit. Regenerate: TDA_WRITE_API_TYPES=1 npx vitest run --project unit services/console/src/api/schema.gen.spec.ts
 */
export interface paths {
  '/runs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The acting owner's runs, newest first (keyset pagination) */
    get: operations['listRuns'];
    put?: never;
    /** Create a run of a flow (idempotent per owner and idempotencyKey) */
    post: operations['triggerRun'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The run document: steps, statuses, inputs, outputs, errors */
    get: operations['getRun'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** seed 004 status for pollers; ETag, If-None-Match -> 304 */
    get: operations['getRunStatus'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Cancel (idempotent); RUNNING steps stop at their next heartbeat */
    post: operations['cancelRun'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/steps/{stepId}/blocked-on': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Why a step is not running / not done (a queued run: reason kind "queued" with its position) */
    get: operations['blockedOn'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/steps/{stepId}/artifact': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The step's primary artifact (outputs.gcs_uri), byte for byte as stored
     * @description Read-only, through the artifact store. Served only from the deployment's artifacts bucket and up to 1048576 bytes. Headers X-TDA-Artifact-Uri and X-TDA-Artifact-Sha256 (equal to outputs.execution.artifact.sha256).
     */
    get: operations['getStepArtifact'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/steps/{stepId}/files/{fileName}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * One file of the step's bundle (a chart PNG, the OHLCV CSV), as stored
     * @description Files beside the primary artifact named <stepId>.<…> (.png, .json, .csv, .md), up to 8388608 bytes; the charts manifest names each PNG (the basename of its gcs_uri). Header X-TDA-Artifact-Sha256.
     */
    get: operations['getStepFile'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/flows': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The flow catalogue: flowKey and description of every flow that can be triggered */
    get: operations['listFlows'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/healthz': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Liveness (no auth) */
    get: operations['health'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/metrics': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Prometheus metrics (no auth) */
    get: operations['metrics'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/openapi.json': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** This API description (OpenAPI 3.1, no auth) */
    get: operations['openApi'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/reconcile': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Drift report of every RUNNING run (dry run: zero writes, zero publishes)
     * @description READY steps never claimed (republish), RUNNING steps with an expired lease (reclaim, or FAILED LEASE_EXPIRED at maxAttempts), RUNNING steps past their deadlineAt (FAILED STEP_TIMEOUT), runs past their deadline (FAILED RUN_TIMEOUT), documents behind their own rules (advance), and SUCCEEDED steps whose artifact is missing (report only).
     */
    get: operations['reconcileDryRun'];
    put?: never;
    /**
     * Apply the reconcile decisions now; the report says what was done
     * @description The same pass as the timer: one conditional write per run with drift, step-ready messages for READY steps, then the queued-run admission. Missing artifacts are reported, never fixed. Options are query parameters; no body.
     */
    post: operations['reconcileApply'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/steps/{stepId}/retry': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Retry a FAILED step of a FAILED run: the step and the steps the failure cancelled go back to PENDING (attempt 0, history in retryHistory), the run RUNNING; idempotent */
    post: operations['retryStep'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/retry': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Retry every FAILED step of a FAILED run together */
    post: operations['retryRun'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/rerun': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** A NEW run of the same flow/scope/owner: fromStepId and its downstream are executed, every other step is reused SUCCEEDED from the source (same gcs_uri, outputs.execution.reusedFrom) */
    post: operations['rerunFromStep'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/replay': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Seek a step-ready or the step-events subscription to a time or a snapshot (Pub/Sub redelivers what it retained); dryRun lists, from the run documents, which steps would receive messages and what each receiver would do */
    post: operations['replaySubscription'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/snapshots': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Snapshot a subscription's ack state now (for POST /admin/replay {snapshot}) */
    post: operations['createSnapshot'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/accounts': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The request owner's accounts by accountId (keyset pagination) */
    get: operations['listAccounts'];
    put?: never;
    /** Create an account of the request owner (create-only) */
    post: operations['createAccount'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/accounts/{accountId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One of your accounts (ETag: its version) */
    get: operations['getAccount'];
    /** Replace name, cash, positions or riskLimits (conditional on the version) */
    put: operations['replaceAccount'];
    post?: never;
    /** Delete one of your accounts */
    delete: operations['deleteAccount'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/schedules': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The request owner's schedules, newest first (keyset pages) */
    get: operations['listSchedules'];
    put?: never;
    /** Create a schedule of a flow (checked completely now: cron, time zone, flow, scope) */
    post: operations['createSchedule'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/schedules/{scheduleId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A schedule with its next 5 fire times */
    get: operations['getSchedule'];
    put?: never;
    post?: never;
    /** Delete a schedule (its runs and signals stay) */
    delete: operations['deleteSchedule'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/schedules/{scheduleId}/pause': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Pause (no slot fires while paused) */
    post: operations['pauseSchedule'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/schedules/{scheduleId}/resume': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Resume from now (the slots of the pause are not caught up) */
    post: operations['resumeSchedule'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/schedules/{scheduleId}/fire': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Fire now (the current minute) or a past slot (backfill, body {slotAt}): one run per slot */
    post: operations['fireSchedule'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/signals': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The request owner's signals, newest first; ?symbol= any spelling of the pair */
    get: operations['listSignals'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/schedules/tick': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Fire every due schedule slot now (Cloud Scheduler, every minute); idempotent per slot */
    post: operations['tickSchedules'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/backtests/jobs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The request owner's jobs, created_at desc then job_id desc (keyset pages) */
    get: operations['listBacktestJobs'];
    put?: never;
    /** Create a backtest job (a run of flow backtest_v1); every guard is checked now */
    post: operations['createBacktestJob'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/backtests/jobs/{jobId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** State, stage, progress per stage, the three hashes; last_error when failed */
    get: operations['getBacktestJob'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/backtests/jobs/{jobId}/top': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Best so far while running (no report tables); the result when succeeded (report_table_md, trades for top_trades_n) */
    get: operations['getBacktestTop'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/backtests/jobs/{jobId}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Idempotent: queued → cancelled at once; running → stops at the next batch boundary (cancelled, never failed) */
    post: operations['cancelBacktestJob'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/evaluations/recommendations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Walk-forward: flow 4 at each point of [from, to] every `every`, `window` runs at a time, each recommendation scored against the candles after its asOf */
    post: operations['createRecommendationEvaluation'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/evaluations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The request owner's evaluations, createdAt desc (keyset pages; no scores) */
    get: operations['listEvaluations'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/evaluations/{evaluationId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** State, counts, each point with its run and scores, the table per provider/model/prompt */
    get: operations['getEvaluation'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/evaluations/{evaluationId}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Idempotent: no further run is triggered; the active runs are cancelled */
    post: operations['cancelEvaluation'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/reports': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The request owner's LLM reports, newest first by asOf (keyset pagination) */
    get: operations['listReports'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/reports/{reportId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One report index entry; the report itself: GET /runs/{runId}/steps/{stepId}/artifact */
    get: operations['getReport'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/recommendations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The request owner's recommendations, newest first by asOf (keyset pagination)
     * @description minStrength is applied while reading in list order: a page holds up to limit matches, or fewer with a nextCursor after 500 entries read.
     */
    get: operations['listRecommendations'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/recommendations/{recoId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One recommendation index entry; the recommendation itself: GET /runs/{runId}/steps/{stepId}/artifact */
    get: operations['getRecommendation'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/index/backfill': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create the missing index entries of SUCCEEDED LLM_REPORT / LLM_RECOMMENDATION steps (every owner); a dry run unless apply is true */
    post: operations['backfillIndex'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/me': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller: owner, role, how it authenticated (the console sign-in check) */
    get: operations['whoAmI'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/tokens': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** API tokens, newest first, never the secrets (admin) */
    get: operations['listApiTokens'];
    put?: never;
    /** Create an API token for an owner and a role (admin); the token is shown once */
    post: operations['createApiToken'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/tokens/{tokenId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Revoke a token: refused from the next request on (admin; idempotent) */
    delete: operations['revokeApiToken'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/identities': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Google accounts mapped to owners (admin) */
    get: operations['listUserIdentities'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/admin/identities/{email}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /** Map a Google account to an owner and a role (admin; replaces) */
    put: operations['putUserIdentity'];
    post?: never;
    /** Remove a mapping: the account is refused from the next request on (admin) */
    delete: operations['deleteUserIdentity'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/runs/{runId}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One run's live events (SSE) from its current state; ends when the run ends */
    get: operations['streamRunEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/events/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Live events of every run of the acting owner (SSE), from now or from Last-Event-ID */
    get: operations['streamOwnerEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    TriggerRequest: {
      flowKey: string;
      scope: {
        symbol: string;
        asOf?: string;
        accountId?: string;
        timeframes?: ('1h' | '4h' | '1d' | '1w' | '1M')[];
      };
      idempotencyKey?: string;
      trigger?: {
        /** @enum {string} */
        type: 'SCHEDULER' | 'USER' | 'SYSTEM' | 'DEBUG_HTTP';
        source: string;
        scheduleId?: string;
        slotAt?: string;
      };
      deadlineSeconds?: number;
    };
    ApiError: {
      /** @enum {string} */
      code:
        | 'FLOW_RUN_INVALID'
        | 'INVALID_STEP_INPUTS'
        | 'STEP_CLAIM_CONFLICT'
        | 'STEP_FINALIZE_CONFLICT'
        | 'LLM_PROFILE_INVALID'
        | 'INVALID_STRUCTURED_OUTPUT'
        | 'LLM_SAFETY_BLOCK'
        | 'LLM_TIMEOUT'
        | 'LLM_UNAVAILABLE'
        | 'MARKET_DATA_UNAVAILABLE'
        | 'GCS_WRITE_FAILED'
        | 'UPSTREAM_UNAVAILABLE'
        | 'STEP_TIMEOUT'
        | 'RUN_TIMEOUT'
        | 'LEASE_EXPIRED'
        | 'RETRIES_EXHAUSTED'
        | 'CANCELLED'
        | 'INVALID_REQUEST'
        | 'UNAUTHENTICATED'
        | 'FORBIDDEN'
        | 'NOT_FOUND'
        | 'INVALID_REFERENCE'
        | 'EXPANSION_LIMIT_EXCEEDED'
        | 'CONFLICT'
        | 'QUOTA_EXCEEDED'
        | 'VALIDATION_FAILED'
        | 'INTERNAL_ERROR';
      message: string;
      details?: Record<string, unknown>;
      retryable?: boolean;
      requestId?: string;
    };
    /** @description flow_runs/{runId} as stored (abridged; see contracts/flow_run.schema.json). */
    FlowRun: {
      schemaVersion: number;
      runId: string;
      flowKey: string;
      /** @enum {string} */
      status: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
      /** Format: date-time */
      startedAt?: string;
      /** Format: date-time */
      finishedAt?: string;
      trigger: Record<string, unknown>;
      scope: Record<string, unknown>;
      ownerId: string;
      idempotencyKey?: string;
      /** Format: date-time */
      deadlineAt?: string;
      /** Format: date-time */
      cancelRequestedAt?: string;
      progress?: Record<string, unknown>;
      error?: Record<string, unknown>;
      /** @description stepId -> step */
      steps: {
        [key: string]: {
          /** @enum {string} */
          stepType:
            | 'OHLCV_EXPORT'
            | 'CHART_EXPORT'
            | 'LLM_REPORT'
            | 'LLM_RECOMMENDATION'
            | 'ACCOUNT_EXPORT'
            | 'INDICATORS_ON_DEMAND'
            | 'NEWS_EXPORT'
            | 'BACKTEST';
          /** @enum {string} */
          status:
            'PENDING' | 'READY' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'SKIPPED' | 'CANCELLED';
          dependsOn: string[];
          attempt: number;
          inputs: components['schemas']['StepInputs'];
          /** @description gcs_uri, execution, reportId/recommendationId (contracts/flow_run) */
          outputs: Record<string, unknown>;
        };
      };
    };
    RunListPage: {
      runs: components['schemas']['FlowRun'][];
      /** @description null on the last page */
      nextCursor: string | null;
    };
    BlockedOn: {
      runId: string;
      /** @enum {string} */
      runStatus: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
      stepId: string;
      /** @enum {string} */
      status: 'PENDING' | 'READY' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'SKIPPED' | 'CANCELLED';
      reasons: {
        kind: string;
      }[];
      summary: string;
    };
    FlowList: {
      flows: {
        flowKey: string;
        description: string;
        /** @description The scope a trigger may give, as JSON Schema (type object, properties, required); clients generate their trigger form from it */
        scopeSchema: {
          /** @enum {string} */
          type: 'object';
          properties: {
            [key: string]: Record<string, unknown>;
          };
          required: string[];
          additionalProperties?: boolean;
        };
      }[];
    };
    /** @description A primary step artifact as stored, by step type: contracts/ohlcv_export.schema.json (OHLCV_EXPORT), contracts/charts_manifest.schema.json (CHART_EXPORT), contracts/llm_report_file.schema.json (LLM_REPORT), contracts/llm_recommendation_file.schema.json (LLM_RECOMMENDATION), contracts/account_snapshot.schema.json (ACCOUNT_EXPORT), contracts/indicator_values.schema.json (INDICATORS_ON_DEMAND), contracts/news_export.schema.json (NEWS_EXPORT), contracts/backtest_result.schema.json (BACKTEST). */
    StepArtifact: Record<string, unknown>;
    /** @description A step's inputs, by step type: contracts/ohlcv_export_inputs.schema.json (OHLCV_EXPORT), contracts/chart_export_inputs.schema.json (CHART_EXPORT), contracts/llm_report_inputs.schema.json (LLM_REPORT), contracts/llm_recommendation_inputs.schema.json (LLM_RECOMMENDATION), contracts/account_export_inputs.schema.json (ACCOUNT_EXPORT), contracts/indicators_on_demand_inputs.schema.json (INDICATORS_ON_DEMAND), contracts/news_export_inputs.schema.json (NEWS_EXPORT), contracts/backtest_inputs.schema.json (BACKTEST). flow_run.schema.json selects the contract by stepType; a step whose inputs do not match fails with INVALID_STEP_INPUTS. */
    StepInputs: Record<string, unknown>;
    DriftItem: {
      /** @enum {string} */
      kind:
        | 'ready_unclaimed'
        | 'lease_expired'
        | 'step_timeout'
        | 'run_deadline'
        | 'advance_pending'
        | 'artifact_missing';
      /**
       * @description What the apply pass does about it; report_only: nothing is changed automatically
       * @enum {string}
       */
      action:
        | 'republish'
        | 'reclaim'
        | 'fail_step'
        | 'cancel_step'
        | 'fail_run'
        | 'advance'
        | 'report_only';
      stepId?: string;
      /** @description The facts behind the finding (sanitized) */
      detail: Record<string, unknown>;
    };
    ReconcileReport: {
      /** @enum {string} */
      mode: 'dry_run' | 'apply';
      /** Format: date-time */
      startedAt: string;
      durationMs: number;
      runsScanned: number;
      /** @description FAILED and CANCELLED runs looked at (newest TDA_RECONCILE_ENDED_RUNS of each) for steps a dead worker left RUNNING */
      endedRunsScanned?: number;
      maxRuns: number;
      /** @description More RUNNING runs remained than maxRuns allowed */
      truncated: boolean;
      /** @description 0 in a dry run */
      runsWritten: number;
      /** @description step-ready messages published; 0 in a dry run */
      republished: number;
      reclaimedSteps?: number;
      failedSteps?: number;
      timedOutSteps?: number;
      cancelledSteps?: number;
      runsFinished?: number;
      errors?: number;
      artifactsChecked?: number;
      artifactsMissing?: number;
      artifactCheckErrors?: number;
      drift: {
        total: number;
        byKind: {
          [key: string]: number;
        };
        runs: {
          runId: string;
          flowKey: string;
          /** @enum {string} */
          status: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
          items: components['schemas']['DriftItem'][];
          applied?: {
            written: boolean;
            /** @enum {string} */
            status: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
            republished: string[];
          };
          error?: {
            /** @enum {string} */
            code:
              | 'FLOW_RUN_INVALID'
              | 'INVALID_STEP_INPUTS'
              | 'STEP_CLAIM_CONFLICT'
              | 'STEP_FINALIZE_CONFLICT'
              | 'LLM_PROFILE_INVALID'
              | 'INVALID_STRUCTURED_OUTPUT'
              | 'LLM_SAFETY_BLOCK'
              | 'LLM_TIMEOUT'
              | 'LLM_UNAVAILABLE'
              | 'MARKET_DATA_UNAVAILABLE'
              | 'GCS_WRITE_FAILED'
              | 'UPSTREAM_UNAVAILABLE'
              | 'STEP_TIMEOUT'
              | 'RUN_TIMEOUT'
              | 'LEASE_EXPIRED'
              | 'RETRIES_EXHAUSTED'
              | 'CANCELLED'
              | 'INVALID_REQUEST'
              | 'UNAUTHENTICATED'
              | 'FORBIDDEN'
              | 'NOT_FOUND'
              | 'INVALID_REFERENCE'
              | 'EXPANSION_LIMIT_EXCEEDED'
              | 'CONFLICT'
              | 'QUOTA_EXCEEDED'
              | 'VALIDATION_FAILED'
              | 'INTERNAL_ERROR';
            message: string;
          };
        }[];
      };
    };
    RerunRequest: {
      fromStepId: string;
    };
    /** @description Exactly one of time and snapshot. */
    ReplayRequest: {
      /** @description <prefix>-step-ready-<step-type>-sub or <prefix>-step-events-sub */
      subscription: string;
      /**
       * Format: date-time
       * @description Not in the future
       */
      time?: string;
      snapshot?: string;
      /** @default false */
      dryRun: boolean;
    };
    ReplayResponse: {
      subscription: string;
      /** @enum {string} */
      kind: 'step_ready' | 'step_events';
      /** @enum {string} */
      stepType?:
        | 'OHLCV_EXPORT'
        | 'CHART_EXPORT'
        | 'LLM_REPORT'
        | 'LLM_RECOMMENDATION'
        | 'ACCOUNT_EXPORT'
        | 'INDICATORS_ON_DEMAND'
        | 'NEWS_EXPORT'
        | 'BACKTEST';
      dryRun: boolean;
      seeked: boolean;
      /** @description {time} or {snapshot} */
      target: Record<string, unknown>;
      /**
       * Format: date-time
       * @description Lower bound of the replayed publish times (time, or snapshot expireTime - 7 days)
       */
      since: string;
      /** @constant */
      source: 'run_documents';
      note: string;
      scannedRuns: number;
      truncated: boolean;
      counts: {
        [key: string]: number;
      };
      /** @description step_ready: the steps that would receive a message */
      steps?: {
        runId: string;
        /** @enum {string} */
        runStatus: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
        stepId: string;
        /** @enum {string} */
        stepType:
          | 'OHLCV_EXPORT'
          | 'CHART_EXPORT'
          | 'LLM_REPORT'
          | 'LLM_RECOMMENDATION'
          | 'ACCOUNT_EXPORT'
          | 'INDICATORS_ON_DEMAND'
          | 'NEWS_EXPORT'
          | 'BACKTEST';
        /** @enum {string} */
        stepStatus:
          'PENDING' | 'READY' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'SKIPPED' | 'CANCELLED';
        /** @enum {string} */
        evidence: 'ready_at' | 'still_ready';
        /** Format: date-time */
        readyAt?: string;
        /** @enum {string} */
        decision: 'execute' | 'takeover' | 'noop';
        reason?: Record<string, unknown>;
        /** @description 'execute', 'takeover: ...' or 'noop: <reason>' */
        summary: string;
      }[];
      /** @description step_events: the runs whose step events would be redelivered */
      runs?: {
        runId: string;
        /** @enum {string} */
        runStatus: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
        events: Record<string, unknown>[];
        /** @enum {string} */
        decision: 'advance' | 'noop';
        wouldBecomeReady: string[];
        wouldRepublish: string[];
        summary: string;
      }[];
    };
    SnapshotRequest: {
      subscription: string;
      name: string;
    };
    Snapshot: {
      name: string;
      subscription: string;
      topic: string;
      /** Format: date-time */
      expireTime?: string;
      /** Format: date-time */
      replaysFrom?: string;
    };
    /** @description accounts/{accountId} (abridged; see contracts/account.schema.json). */
    Account: {
      schemaVersion: number;
      accountId: string;
      ownerId: string;
      quoteCurrency: string;
      /** @description ccxt id: the live exchange account */
      exchange?: string;
      name: string;
      cash: number;
      positions: {
        symbol: string;
        /** @enum {string} */
        side: 'long' | 'short';
        size: number;
        averageEntry: number;
        /** Format: date-time */
        openedAt?: string;
      }[];
      riskLimits: {
        maxPositionFraction: number;
        maxRiskPerTradeFraction?: number;
      };
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    /** @description A paper account (cash required) or, with `exchange`, the live exchange account of the ACCOUNT_EXPORT worker (no cash or positions). Defaults: name = accountId, positions [], riskLimits {maxPositionFraction: 0.1}. */
    AccountCreateRequest: {
      accountId: string;
      quoteCurrency: string;
      exchange?: string;
      name?: string;
      cash?: number;
      positions?: {
        symbol: string;
        /** @enum {string} */
        side: 'long' | 'short';
        size: number;
        averageEntry: number;
        /** Format: date-time */
        openedAt?: string;
      }[];
      riskLimits?: {
        maxPositionFraction: number;
        maxRiskPerTradeFraction?: number;
      };
    };
    /** @description The fields to replace (each as a whole); at least one. */
    AccountReplaceRequest: {
      name?: string;
      cash?: number;
      positions?: {
        symbol: string;
        /** @enum {string} */
        side: 'long' | 'short';
        size: number;
        averageEntry: number;
        /** Format: date-time */
        openedAt?: string;
      }[];
      riskLimits?: {
        maxPositionFraction: number;
        maxRiskPerTradeFraction?: number;
      };
    };
    AccountListPage: {
      accounts: components['schemas']['Account'][];
      /** @description null on the last page */
      nextCursor: string | null;
    };
    /** @description reports/{reportId} (contracts/report_index.schema.json) */
    ReportIndexEntry: {
      schemaVersion: number;
      reportId: string;
      ownerId: string;
      runId: string;
      stepId: string;
      flowKey: string;
      symbol: string;
      symbolKey: string;
      /**
       * @description absent for a cross-timeframe report
       * @enum {string}
       */
      timeframe?: '1h' | '4h' | '1d' | '1w' | '1M';
      /** Format: date-time */
      asOf: string;
      /** @enum {string} */
      provider: 'gemini' | 'vertex' | 'offline';
      modelName: string;
      promptId: string;
      headline: string;
      /** @enum {string} */
      bias?: 'bullish' | 'bearish' | 'sideways';
      confidence?: number;
      /** Format: date-time */
      createdAt: string;
      gcs_uri: string;
    };
    /** @description recommendations/{recoId} (contracts/recommendation_index.schema.json) */
    RecommendationIndexEntry: {
      schemaVersion: number;
      recoId: string;
      ownerId: string;
      runId: string;
      stepId: string;
      flowKey: string;
      symbol: string;
      symbolKey: string;
      /** Format: date-time */
      asOf: string;
      accountId?: string;
      /** @enum {string} */
      action: 'BUY' | 'SELL' | 'HOLD' | 'REDUCE';
      signal_strength: number;
      headline: string;
      /** @enum {string} */
      provider: 'gemini' | 'vertex' | 'offline';
      modelName: string;
      reportIds: string[];
      /** Format: date-time */
      createdAt: string;
      gcs_uri: string;
    };
    ReportListPage: {
      reports: components['schemas']['ReportIndexEntry'][];
      /** @description null when nothing more matches */
      nextCursor: string | null;
    };
    RecommendationListPage: {
      recommendations: components['schemas']['RecommendationIndexEntry'][];
      /** @description null when nothing more matches */
      nextCursor: string | null;
    };
    IndexBackfillRequest: {
      /**
       * @description false: a dry run
       * @default false
       */
      apply: boolean;
    };
    IndexBackfillReport: {
      dryRun: boolean;
      scannedRuns: number;
      /** @description more than 10000 runs */
      truncated: boolean;
      counts: {
        created: number;
        wouldCreate: number;
        alreadyIndexed: number;
        unreadable: number;
      };
      /** @description created / would_create / unreadable entries (at most 500) */
      items: {
        runId: string;
        stepId: string;
        /** @enum {string} */
        kind: 'report' | 'recommendation';
        id: string;
        /** @enum {string} */
        outcome: 'created' | 'would_create' | 'unreadable';
        /** @description unreadable: missing | invalid_uri | foreign_bucket | not_json | invalid_artifact | other_step | invalid_entry */
        reason?: string;
      }[];
      itemsTruncated: boolean;
    };
    /** @description Who the request is (GET /me): owner, role, how it authenticated, which credential */
    Principal: {
      ownerId: string;
      /** @enum {string} */
      role: 'user' | 'admin';
      /** @enum {string} */
      method: 'api_token' | 'operator_token' | 'google_id_token' | 'iap';
      /** @description tok_…, operator, google:<email> or iap:<email> */
      subject: string;
    };
    /** @description contracts/api_token.schema.json: a stored token, never the secret */
    ApiToken: {
      tokenId: string;
      ownerId: string;
      /** @enum {string} */
      role: 'user' | 'admin';
      name: string;
      /** Format: date-time */
      createdAt: string;
      createdBy: string;
      /** Format: date-time */
      expiresAt?: string;
      /** Format: date-time */
      revokedAt?: string;
      /** Format: date-time */
      lastUsedAt?: string;
    };
    /** @description The new token: `token` is in this answer and nowhere else, ever */
    ApiTokenCreated: {
      tokenId: string;
      ownerId: string;
      /** @enum {string} */
      role: 'user' | 'admin';
      name: string;
      /** Format: date-time */
      createdAt: string;
      createdBy: string;
      /** Format: date-time */
      expiresAt?: string;
      /** Format: date-time */
      revokedAt?: string;
      /** Format: date-time */
      lastUsedAt?: string;
      token: string;
    };
    /** @description contracts/api_token_request.schema.json */
    ApiTokenRequest: {
      ownerId: string;
      /** @enum {string} */
      role: 'user' | 'admin';
      name: string;
      expiresInDays?: number;
    };
    ApiTokenList: {
      tokens: components['schemas']['ApiToken'][];
    };
    /** @description contracts/user_identity.schema.json: a Google account mapped to an owner */
    UserIdentity: {
      email: string;
      ownerId: string;
      /** @enum {string} */
      role: 'user' | 'admin';
      /** Format: date-time */
      createdAt: string;
      createdBy: string;
    };
    /** @description contracts/user_identity_request.schema.json */
    UserIdentityRequest: {
      ownerId: string;
      /** @enum {string} */
      role: 'user' | 'admin';
    };
    UserIdentityList: {
      identities: components['schemas']['UserIdentity'][];
    };
    /** @description The `data:` of one event. `event:` is run.created | run.status.changed | run.step.changed | run.step.completed (a step that ended); `id:` is an opaque resume token. Heartbeat comments (`: heartbeat`) keep idle streams open. */
    RunEvent: {
      runId: string;
      /**
       * Format: date-time
       * @description the run's updatedAt
       */
      at: string;
      flowKey?: string;
      ownerId?: string;
      symbol?: string;
      /** Format: date-time */
      createdAt?: string;
      /** @description the new run or step status */
      status?: string;
      /** @description null: the client knew none */
      previousStatus?: string | null;
      stepId?: string;
      stepType?: string;
      attempt?: number;
      /** @description CODE: message */
      error?: string;
    };
    /** @description contracts/flow_schedule_request.schema.json */
    FlowScheduleRequest: {
      flowKey: string;
      /** @description The flow's scope without asOf (a run's asOf is its slot time) */
      scope: Record<string, unknown>;
      /** @description 5-field cron, e.g. *\/5 * * * * */
      cron: string;
      /** @description IANA time zone, default UTC */
      timeZone?: string;
      enabled?: boolean;
      /** @enum {string} */
      catchUp?: 'skip' | 'latest';
      /** @enum {string} */
      overlap?: 'skip' | 'allow';
      minSignalStrength?: number;
      description?: string;
    };
    /** @description flow_schedules/{scheduleId} (contracts/flow_schedule.schema.json) + nextFireTimes */
    FlowSchedule: {
      scheduleId: string;
      ownerId: string;
      flowKey: string;
      scope: Record<string, unknown>;
      cron: string;
      timeZone: string;
      enabled: boolean;
      /** @enum {string} */
      catchUp?: 'skip' | 'latest';
      /** @enum {string} */
      overlap?: 'skip' | 'allow';
      minSignalStrength?: number;
      /** Format: date-time */
      nextSlotAt?: string;
      /** Format: date-time */
      lastSlotAt?: string;
      lastRunId?: string;
      lastFire?: Record<string, unknown>;
      nextFireTimes?: string[];
    };
    ScheduleListPage: {
      schedules: components['schemas']['FlowSchedule'][];
      nextCursor: string | null;
    };
    ScheduleFire: {
      scheduleId: string;
      /** Format: date-time */
      slotAt: string;
      runId: string;
      /** @description false: the slot had been fired before */
      created: boolean;
    };
    /** @description signals/{signalId} (contracts/signal.schema.json); also the signals topic message */
    Signal: {
      signalId: string;
      scheduleId: string;
      /** Format: date-time */
      slotAt: string;
      runId: string;
      symbol: string;
      /** @enum {string} */
      action: 'BUY' | 'SELL' | 'HOLD' | 'REDUCE';
      signal_strength: number;
      minSignalStrength?: number;
      headline?: string;
      recommendationId?: string;
      /** Format: date-time */
      createdAt?: string;
      /** Format: date-time */
      publishedAt?: string;
    };
    SignalListPage: {
      signals: components['schemas']['Signal'][];
      nextCursor: string | null;
    };
    TickReport: {
      /** Format: date-time */
      at: string;
      due: number;
      fired: Record<string, unknown>[];
      skipped: Record<string, unknown>[];
      failed: Record<string, unknown>[];
      unchanged: number;
    };
    /** @description The scope of flow backtest_v1 (GET /flows shows it) plus an optional idempotencyKey; absent fields take the runtime defaults */
    BacktestJobRequest: {
      symbol: string;
      /** @enum {string} */
      timeframe?: '1h' | '4h' | '1d' | '1w' | '1M';
      /** Format: date-time */
      asOf?: string;
      bars?: number;
      /** @description {kind, ma?, params: {name: number[]}} */
      strategy: Record<string, unknown>;
      /** @description Lists per execution field */
      execution?: Record<string, unknown>;
      top_k?: number;
      preselect?: number;
      top_trades_n?: number;
      idempotencyKey?: string;
    };
    /** @description contracts/backtest_job.schema.json */
    BacktestJob: {
      job_id: string;
      owner_id: string;
      /** @enum {string} */
      state: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
      /** @enum {string} */
      stage?: 'stage_a' | 'stage_b' | 'finalizing';
      /** @description {stage, processed_units, total_units, updated_at} */
      progress?: Record<string, unknown>;
      symbol: string;
      timeframe: string;
      /** Format: date-time */
      as_of?: string;
      request: Record<string, unknown>;
      /** @description {request_hash, engine_params_hash, backtest_runtime_config_hash} */
      hashes: Record<string, unknown>;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      started_at?: string;
      /** Format: date-time */
      finished_at?: string;
      /** Format: date-time */
      cancel_requested_at?: string;
      last_error?: string;
      /** @description {code, message, details, retryable} */
      last_error_json?: Record<string, unknown>;
    };
    /** @description contracts/backtest_job.schema.json#/$defs/BacktestTop */
    BacktestTop: {
      job_id: string;
      /** @enum {string} */
      state: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
      /** @enum {string} */
      source: 'best_so_far' | 'result' | 'none';
      /** @enum {string} */
      stage?: 'stage_a' | 'stage_b' | 'finalizing';
      processed_units?: number;
      total_units?: number;
      items: Record<string, unknown>[];
    };
    BacktestJobPage: {
      items: components['schemas']['BacktestJob'][];
      next_cursor: string | null;
    };
    /** @description contracts/recommendation_evaluation_request.schema.json */
    EvaluationRequest: {
      symbol: string;
      /** Format: date-time */
      from: string;
      /** Format: date-time */
      to: string;
      /**
       * @example 1d
       * @example 1w
       */
      every: string;
      accountId: string;
      /** @description More of flow 4's scope (timeframes, ...) */
      scope?: Record<string, unknown>;
      /** @default 10 */
      feeBps: number;
      /** @default 0 */
      slippageBps: number;
      /** @default 2 */
      window: number;
      idempotencyKey?: string;
    };
    /** @description contracts/recommendation_evaluation.schema.json (the stored document) */
    Evaluation: {
      evaluationId: string;
      symbol: string;
      /** Format: date-time */
      from: string;
      /** Format: date-time */
      to: string;
      every: string;
      window?: number;
      points: Record<string, unknown>[];
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      cancelRequestedAt?: string;
    };
    /** @description contracts/recommendation_evaluation.schema.json#/$defs/EvaluationView */
    EvaluationView: {
      evaluationId: string;
      /** @enum {string} */
      state: 'running' | 'completed' | 'cancelled';
      /** @description {points, triggered, active, succeeded, failed, cancelled} */
      counts: Record<string, unknown>;
      items: Record<string, unknown>[];
      table: Record<string, unknown>[];
    };
    EvaluationPage: {
      items: components['schemas']['Evaluation'][];
      nextCursor: string | null;
    };
    /** @description seed 004 status.json (contracts/run_status_summary.schema.json): status is the lifecycle word of run_status (PENDING queued, RUNNING running, SUCCEEDED completed, FAILED failed, CANCELLED cancelled) */
    RunStatusSummary: {
      run_id: string;
      flow_key: string;
      /** @enum {string} */
      status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
      /** @enum {string} */
      run_status: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
      /** @enum {string} */
      trigger: 'scheduler' | 'user' | 'system' | 'debug_http';
      started_at: string | null;
      finished_at: string | null;
      current_step: string | null;
      steps_total: number;
      steps_completed: number;
      /** @description CODE: message */
      error: string | null;
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  listRuns: {
    parameters: {
      query?: {
        limit?: number;
        cursor?: string;
        status?: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
        flowKey?: string;
        /** @description scope.symbol exactly as triggered */
        symbol?: string;
        idempotencyKey?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunListPage'];
        };
      };
      /** @description INVALID_REQUEST: bad limit, cursor, status or unknown parameter */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  triggerRun: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TriggerRequest'];
      };
    };
    responses: {
      /** @description The existing run of this idempotencyKey */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowRun'];
        };
      };
      /** @description Created (Location: /runs/{runId}): RUNNING when admitted, PENDING while queued behind the running-runs limits (see blocked-on) */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowRun'];
        };
      };
      /** @description INVALID_REQUEST: body, scope or flowKey (details.availableFlowKeys) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: idempotencyKey reused for a different request (flowKey, scope or deadlineSeconds; details.field) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description QUOTA_EXCEEDED (retryable): the owner already has TDA_MAX_ACTIVE_RUNS_PER_OWNER active (PENDING or RUNNING) runs; details {ownerId, active, limit}; nothing was created */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getRun: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The run */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowRun'];
        };
      };
      /** @description INVALID_REQUEST: malformed runId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getRunStatus: {
    parameters: {
      query?: never;
      header?: {
        /** @description the ETag of an earlier answer: 304 without a body while it still holds */
        'If-None-Match'?: string;
      };
      path: {
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The status (ETag header; Cache-Control: no-cache) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunStatusSummary'];
        };
      };
      /** @description Unchanged since the ETag in If-None-Match */
      304: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description INVALID_REQUEST: malformed runId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  cancelRun: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The run, CANCELLED (also when it already was) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowRun'];
        };
      };
      /** @description INVALID_REQUEST: malformed runId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: the run already SUCCEEDED or FAILED */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  blockedOn: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
        stepId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Structured reasons and a summary */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BlockedOn'];
        };
      };
      /** @description INVALID_REQUEST: malformed runId or stepId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such run or step */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getStepArtifact: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
        stepId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The artifact JSON (ohlcv_export, charts_manifest, llm_report_file, llm_recommendation_file, account_snapshot, indicator_values, news_export or backtest_result contract, by step type) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['StepArtifact'];
        };
      };
      /** @description INVALID_REQUEST: malformed runId or stepId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such run or step */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: the step has no artifact yet (details.status; artifacts exist once it SUCCEEDED) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: storage cannot serve it (details.reason: read_failed (retryable) | missing | too_large | not_json | invalid_uri | foreign_bucket) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getStepFile: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
        stepId: string;
        fileName: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The file (Content-Type by extension) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'image/png': string;
          'text/csv': string;
        };
      };
      /** @description INVALID_REQUEST: malformed runId or stepId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such run or step, or no such file of the step */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: the step has no artifact yet */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: storage cannot serve it (details.reason) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listFlows: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The flow catalogue */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowList'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  health: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The process is up */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @constant */
            status?: 'ok';
          };
        };
      };
      /** @description NOT_FOUND: another method on this path */
      '4XX': {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  metrics: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Prometheus text exposition (tda_* counters) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/plain': string;
        };
      };
      /** @description NOT_FOUND: another method on this path */
      '4XX': {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  openApi: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description This document */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description NOT_FOUND: another method on this path */
      '4XX': {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  reconcileDryRun: {
    parameters: {
      query?: {
        /** @description RUNNING runs to look at (default and maximum TDA_RECONCILE_MAX_RUNS) */
        limit?: number;
        /** @description Check every SUCCEEDED step's artifact exists (report only). Default true */
        artifacts?: 'true' | 'false';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The drift report; nothing was changed */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReconcileReport'];
        };
      };
      /** @description INVALID_REQUEST: unknown or repeated parameter, bad limit or artifacts */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  reconcileApply: {
    parameters: {
      query?: {
        /** @description RUNNING runs to look at (default and maximum TDA_RECONCILE_MAX_RUNS) */
        limit?: number;
        /** @description Check every SUCCEEDED step's artifact exists (report only). Default true */
        artifacts?: 'true' | 'false';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The drift report with applied per run */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReconcileReport'];
        };
      };
      /** @description INVALID_REQUEST: unknown parameter, bad limit or artifacts, or a body */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  retryStep: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
        stepId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The run as written (RUNNING), or as it is after an earlier retry */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowRun'];
        };
      };
      /** @description INVALID_REQUEST: malformed runId or stepId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such run or step */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: details.reason run_cancelled (a cancelled run never restarts) | step_not_failed | run_not_failed | other_failed_steps (retry them together) | steps_running (retryable: wait for them) | would_fail_again | no_failed_steps */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  retryRun: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The run as written (RUNNING) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowRun'];
        };
      };
      /** @description INVALID_REQUEST: malformed runId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: details.reason run_cancelled (a cancelled run never restarts) | step_not_failed | run_not_failed | other_failed_steps (retry them together) | steps_running (retryable: wait for them) | would_fail_again | no_failed_steps */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  rerunFromStep: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        runId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['RerunRequest'];
      };
    };
    responses: {
      /** @description The new run (Location: /runs/{newRunId}; trigger.rerunOf links the source) */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowRun'];
        };
      };
      /** @description INVALID_REQUEST: malformed runId, body or fromStepId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such run or step */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: a step outside the rerun did not SUCCEED (details.steps) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description QUOTA_EXCEEDED: the owner has too many active runs */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  replaySubscription: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ReplayRequest'];
      };
    };
    responses: {
      /** @description The preview; seeked: true once the subscription was sought */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReplayResponse'];
        };
      };
      /** @description INVALID_REQUEST: unknown subscription (details.allowed), both or neither of time/snapshot, a time in the future or not RFC 3339, a bad snapshot name, a snapshot of another topic */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: the subscription or the snapshot does not exist */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: the broker failed the seek (retryable) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  createSnapshot: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['SnapshotRequest'];
      };
    };
    responses: {
      /** @description The snapshot */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Snapshot'];
        };
      };
      /** @description INVALID_REQUEST: unknown subscription, bad name */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: the subscription does not exist */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: a snapshot of that name exists */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: the broker failed */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listAccounts: {
    parameters: {
      query?: {
        limit?: number;
        cursor?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AccountListPage'];
        };
      };
      /** @description INVALID_REQUEST: bad limit or cursor, unknown parameter */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  createAccount: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['AccountCreateRequest'];
      };
    };
    responses: {
      /** @description Created (Location, ETag) */
      201: {
        headers: {
          /** @description The account version */
          ETag?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Account'];
        };
      };
      /** @description INVALID_REQUEST: body or account rules (details.issues) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: the accountId is taken (ids are unique across owners) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getAccount: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        accountId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The account (ETag: its version) */
      200: {
        headers: {
          /** @description The account version */
          ETag?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Account'];
        };
      };
      /** @description INVALID_REQUEST: malformed accountId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such account, or another owner's */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  replaceAccount: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
        /** @description The ETag of a read: the write applies only to that version (else 409) */
        'If-Match'?: string;
      };
      path: {
        accountId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['AccountReplaceRequest'];
      };
    };
    responses: {
      /** @description The account as written (ETag) */
      200: {
        headers: {
          /** @description The account version */
          ETag?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Account'];
        };
      };
      /** @description INVALID_REQUEST: body or account rules (details.issues) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such account, or another owner's */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT (retryable): the account changed since If-Match; read it again */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  deleteAccount: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
        /** @description The ETag of a read: the write applies only to that version (else 409) */
        'If-Match'?: string;
      };
      path: {
        accountId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description INVALID_REQUEST: malformed accountId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such account, or another owner's */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT (retryable): the account changed since If-Match */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listSchedules: {
    parameters: {
      query?: {
        limit?: number;
        cursor?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleListPage'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  createSchedule: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['FlowScheduleRequest'];
      };
    };
    responses: {
      /** @description Created (Location) */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowSchedule'];
        };
      };
      /** @description INVALID_REQUEST: invalid cron, unknown time zone, unknown flow, a scope the flow refuses */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getSchedule: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        scheduleId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The schedule */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowSchedule'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such schedule of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  deleteSchedule: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        scheduleId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such schedule of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  pauseSchedule: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        scheduleId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The schedule */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowSchedule'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such schedule of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  resumeSchedule: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        scheduleId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The schedule */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlowSchedule'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such schedule of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  fireSchedule: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        scheduleId: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          /** Format: date-time */
          slotAt?: string;
        };
      };
    };
    responses: {
      /** @description The slot had been fired: its run */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleFire'];
        };
      };
      /** @description Fired (Location: the run) */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleFire'];
        };
      };
      /** @description INVALID_REQUEST: slotAt in the future or not a fire time of the expression */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such schedule of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listSignals: {
    parameters: {
      query?: {
        symbol?: string;
        limit?: number;
        cursor?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SignalListPage'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  tickSchedules: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description What the tick did */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TickReport'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listBacktestJobs: {
    parameters: {
      query?: {
        state?: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
        limit?: number;
        cursor?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BacktestJobPage'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  createBacktestJob: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['BacktestJobRequest'];
      };
    };
    responses: {
      /** @description The existing job of a repeated idempotencyKey */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BacktestJob'];
        };
      };
      /** @description Created (Location) */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BacktestJob'];
        };
      };
      /** @description INVALID_REQUEST: not an object, unknown field, bad symbol or asOf */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description VALIDATION_FAILED: the grid breaks guards (600,000 variants, compute memory, top_k above top_k_persisted_default, top_trades_n above top_k, ...); details.violations lists all, in a fixed order */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description QUOTA_EXCEEDED (retryable): TDA_BACKTEST_MAX_ACTIVE_JOBS_PER_OWNER queued + running jobs; nothing was created */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getBacktestJob: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        jobId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The job */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BacktestJob'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no backtest job of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getBacktestTop: {
    parameters: {
      query?: {
        limit?: number;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        jobId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The ranking */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BacktestTop'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no backtest job of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  cancelBacktestJob: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        jobId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The job */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BacktestJob'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no backtest job of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description CONFLICT: the job already succeeded or failed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  createRecommendationEvaluation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['EvaluationRequest'];
      };
    };
    responses: {
      /** @description The existing evaluation of a repeated idempotencyKey */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EvaluationView'];
        };
      };
      /** @description Created (Location) */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EvaluationView'];
        };
      };
      /** @description INVALID_REQUEST: a field, a period, to before from, more than TDA_EVALUATION_MAX_POINTS points, or a scope flow 4 refuses */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listEvaluations: {
    parameters: {
      query?: {
        limit?: number;
        cursor?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EvaluationPage'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getEvaluation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        evaluationId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The evaluation */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EvaluationView'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no evaluation of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  cancelEvaluation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        evaluationId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The evaluation */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EvaluationView'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no evaluation of the request owner (another owner's is a 404) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listReports: {
    parameters: {
      query?: {
        /** @description BTC-USDT, BTC/USDT and BTCUSDT are the same symbol (matched on symbolKey) */
        symbol?: string;
        timeframe?: '1h' | '4h' | '1d' | '1w' | '1M';
        /** @description only reports describing this moment or earlier (flow 3: limit=1 per timeframe) */
        asOf?: string;
        limit?: number;
        /** @description nextCursor of the previous page of the same query */
        cursor?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReportListPage'];
        };
      };
      /** @description INVALID_REQUEST: bad limit, cursor, symbol, filter or unknown parameter (details.parameter) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: the index store is unavailable (retryable) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getReport: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        reportId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The entry */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReportIndexEntry'];
        };
      };
      /** @description INVALID_REQUEST: malformed reportId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such report, or another owner's */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: the index store is unavailable (retryable) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listRecommendations: {
    parameters: {
      query?: {
        /** @description BTC-USDT, BTC/USDT and BTCUSDT are the same symbol (matched on symbolKey) */
        symbol?: string;
        /** @description only signal_strength >= minStrength */
        minStrength?: number;
        limit?: number;
        /** @description nextCursor of the previous page of the same query */
        cursor?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RecommendationListPage'];
        };
      };
      /** @description INVALID_REQUEST: bad limit, cursor, symbol, filter or unknown parameter (details.parameter) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: the index store is unavailable (retryable) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  getRecommendation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
      };
      path: {
        recoId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The entry */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RecommendationIndexEntry'];
        };
      };
      /** @description INVALID_REQUEST: malformed recoId */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such recommendation, or another owner's */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: the index store is unavailable (retryable) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  backfillIndex: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['IndexBackfillRequest'];
      };
    };
    responses: {
      /** @description Counts (created, wouldCreate, alreadyIndexed, unreadable) and the items */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IndexBackfillReport'];
        };
      };
      /** @description INVALID_REQUEST: unknown body field, apply not a boolean */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: the run store, storage or the index failed (retryable) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  whoAmI: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The principal */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Principal'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listApiTokens: {
    parameters: {
      query?: {
        ownerId?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The tokens */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiTokenList'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  createApiToken: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ApiTokenRequest'];
      };
    };
    responses: {
      /** @description The token and its record */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiTokenCreated'];
        };
      };
      /** @description INVALID_REQUEST: details.issues */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  revokeApiToken: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        tokenId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The revoked token (a second revoke keeps the first time) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiToken'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such token */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  listUserIdentities: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The mappings */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserIdentityList'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  putUserIdentity: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        email: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UserIdentityRequest'];
      };
    };
    responses: {
      /** @description The mapping */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserIdentity'];
        };
      };
      /** @description INVALID_REQUEST: not an email, or details.issues */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  deleteUserIdentity: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        email: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Removed */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such mapping */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  streamRunEvents: {
    parameters: {
      query?: {
        /** @description The same, for clients that cannot set the header */
        lastEventId?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
        /** @description Resume after this event (EventSource sends it on reconnect): no gap, no duplicate */
        'Last-Event-ID'?: string;
      };
      path: {
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description text/event-stream: the events, then the stream closes after a terminal run status */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': components['schemas']['RunEvent'];
        };
      };
      /** @description INVALID_REQUEST: a Last-Event-ID that is not an id of this stream */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description NOT_FOUND: no such run, or another owner's */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description QUOTA_EXCEEDED (retryable): the owner already holds TDA_SSE_MAX_STREAMS_PER_OWNER open streams */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: no live feed here (poll GET /runs/{runId}/status), or the instance is shutting down (retryable: reconnect) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
  streamOwnerEvents: {
    parameters: {
      query?: {
        /** @description The same, for clients that cannot set the header */
        lastEventId?: string;
      };
      header?: {
        /** @description Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403) */
        'X-TDA-Owner'?: string;
        /** @description Resume after this event (EventSource sends it on reconnect): no gap, no duplicate */
        'Last-Event-ID'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description text/event-stream: run.created and every later change of the owner’s runs */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': components['schemas']['RunEvent'];
        };
      };
      /** @description INVALID_REQUEST: a Last-Event-ID that is not an id of this stream */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description QUOTA_EXCEEDED (retryable): the owner already holds TDA_SSE_MAX_STREAMS_PER_OWNER open streams */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description INTERNAL_ERROR (details in the service logs under requestId) */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
      /** @description UPSTREAM_UNAVAILABLE: no live feed here (poll GET /runs/{runId}/status), or the instance is shutting down (retryable: reconnect) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiError'];
        };
      };
    };
  };
}
