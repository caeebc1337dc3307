/** ScheduleStore (@tda/flow-store): flow_schedules/{scheduleId}. */
export const SCHEDULE_STORE = Symbol('tda.orchestrator.scheduleStore');
/** SignalStore (@tda/flow-store): signals/{signalId}. */
export const SIGNAL_STORE = Symbol('tda.orchestrator.signalStore');
