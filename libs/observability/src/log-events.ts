/**
 * The fixed event taxonomy (DESIGN.md §8, seed 002 observability): every log line carries exactly
 * one `event` from this list, so dashboards and alerts can match on a closed set instead of on
 * free-text messages. Add new names here (never ad hoc at a call site).
 */
export const LOG_EVENTS = [
  // messaging transport
  'message_received',
  'message_acked',
  'message_nacked',
  'message_invalid',
  'message_handler_failed',
  'message_published',
  'subscription_error',
  'transport_started',
  'transport_draining',
  'transport_stopped',
  // Pub/Sub push ingress (worker-kit POST /pubsub/push)
  'pubsub_push_unauthenticated',
  'pubsub_push_rejected',
  // step lifecycle (worker-kit)
  'step_claimed',
  'step_claim_conflict',
  'step_succeeded',
  'step_failed',
  'step_finalize_conflict',
  'step_heartbeat',
  'step_checkpoint',
  'step_noop',
  'step_message_invalid',
  'step_retry',
  'step_recovered',
  'step_recovery_refused',
  'step_cancelled',
  'step_event_publish_failed',
  'lease_lost',
  // orchestration
  'run_created',
  'run_advanced',
  'step_dispatched',
  'reconcile_finished',
  // schedules and signals (flow 7)
  'schedule_fired',
  'schedule_skipped',
  'schedule_fire_failed',
  'schedule_tick_finished',
  'schedule_tick_failed',
  'signal_emitted',
  // walk-forward evaluations (flow 4 at each point of a range)
  'evaluation_point_refused',
  'reconcile_failed',
  'dispatch_failed',
  // queued runs (admission limits, per-owner quota)
  'run_queued',
  'run_quota_exceeded',
  'admission_failed',
  // recovery operations (retry, rerun, replay)
  'run_retried',
  'subscription_seeked',
  'snapshot_created',
  // reports/recommendations index (orchestrator: step events, backfill)
  'index_entry_created',
  'index_entry_exists',
  'index_entry_skipped',
  'index_backfill_finished',
  // HTTP edge
  'http_request_failed',
  // identity and audit (orchestrator): who did what; never the credential itself
  'auth_rejected',
  'audit_action',
  'api_token_created',
  'api_token_revoked',
  'api_token_touch_failed',
  'user_identity_changed',
  // live status streams (SSE)
  'event_stream_opened',
  'event_stream_closed',
  'event_stream_refused',
  // LLM structured output (seed 002)
  'structured_output_invalid',
  'structured_output_repair_attempt_started',
  'structured_output_repair_attempt_finished',
  'llm_schema_hash_mismatch',
  // topology / process lifecycle
  'topology_applied',
  'config_invalid',
  'service_started',
  'service_stopped',
  'service_failed',
  'service_disabled',
] as const;

export type LogEvent = (typeof LOG_EVENTS)[number];

const EVENT_SET: ReadonlySet<string> = new Set(LOG_EVENTS);

export function isLogEvent(value: unknown): value is LogEvent {
  return typeof value === 'string' && EVENT_SET.has(value);
}
