import type { Provider } from '@nestjs/common';
import { InMemoryScheduleStore, InMemorySignalStore } from '@tda/flow-store';
import type { OrchestratorModuleOptions } from '../orchestrator.options';
import { ScheduleFiring } from './schedule-firing.service';
import { SchedulesService } from './schedules.service';
import { SignalEmitter } from './signal-emitter.service';
import { SCHEDULE_STORE, SIGNAL_STORE } from './schedules.tokens';

/** Flow 7: the stores (default: in memory, on the module's clock) and the services. */
export function scheduleProviders(options: OrchestratorModuleOptions): Provider[] {
  const clock = options.clock === undefined ? {} : { clock: options.clock };
  return [
    { provide: SCHEDULE_STORE, useValue: options.schedules ?? new InMemoryScheduleStore(clock) },
    { provide: SIGNAL_STORE, useValue: options.signals ?? new InMemorySignalStore() },
    SchedulesService,
    ScheduleFiring,
    SignalEmitter,
  ];
}
