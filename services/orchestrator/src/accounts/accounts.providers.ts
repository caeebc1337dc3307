import type { Provider } from '@nestjs/common';
import { InMemoryAccountStore } from '@tda/accounts';
import type { OrchestratorModuleOptions } from '../orchestrator.options';
import { ACCOUNT_STORE } from './accounts.tokens';
import { AccountsService } from './accounts.service';

/** The accounts part of the module: the store (default: in memory, on the module's clock) and the service. */
export function accountProviders(options: OrchestratorModuleOptions): Provider[] {
  return [
    {
      provide: ACCOUNT_STORE,
      useValue:
        options.accounts ??
        new InMemoryAccountStore(options.clock === undefined ? {} : { clock: options.clock }),
    },
    AccountsService,
  ];
}
