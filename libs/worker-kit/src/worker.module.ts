import {
  Controller,
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
} from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import {
  MESSAGE_TYPES,
  PubSubContext,
  type HandlerOutcome,
  type MessageBroker,
} from '@tda/messaging';
import { toHandlerOutcome } from './harness-outcome';
import { reportDeliveryOutcome } from './pubsub-push.subscriber';
import { StepHarnessRegistry, type StepHarnessRegistryOptions } from './step-harness.registry';

/**
 * The registry's options (exactly one handler per step type, each consumed step type with a
 * handler, or the module refuses to boot), with the broker both publishing the step events and
 * feeding createWorkerMicroservice.
 */
export interface WorkerModuleOptions extends Omit<StepHarnessRegistryOptions, 'publisher'> {
  broker: MessageBroker;
}

export const WORKER_MODULE_OPTIONS = Symbol.for('tda.worker-kit.options');

/** The @EventPattern('step_ready') entry point: dispatch, then HarnessOutcome → ack outcome. */
@Controller()
export class StepReadyController {
  constructor(@Inject(StepHarnessRegistry) private readonly registry: StepHarnessRegistry) {}

  @EventPattern(MESSAGE_TYPES.stepReady)
  async onStepReady(
    @Payload() body: unknown,
    @Ctx() context: PubSubContext,
  ): Promise<HandlerOutcome> {
    // A throw propagates to PubSubServer, which nacks (transient infrastructure failure).
    const outcome = await this.registry.dispatch(body, {
      deliveryAttempt: context.getDeliveryAttempt(),
      messageId: context.getMessageId(),
    });
    // A Pub/Sub push delivery answers over HTTP and needs the decision (invalid → 400), not
    // only the ack; a pulled message ignores it.
    reportDeliveryOutcome(context.getMessage(), outcome);
    return toHandlerOutcome(outcome);
  }
}

/** Aborts running handlers when the app closes (after the transport's drain window). */
@Injectable()
class RegistryLifecycle implements BeforeApplicationShutdown {
  constructor(@Inject(StepHarnessRegistry) private readonly registry: StepHarnessRegistry) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.registry.shutdown();
  }
}

/**
 * The worker side of DESIGN.md §5 step 3 as a Nest dynamic module. It receives already-built
 * adapter instances (so a local launcher composes every service in one process and tests pass
 * in-memory adapters) and builds one StepHarness per handler. A bad handler set throws a
 * WorkerConfigError while the app initialises: the worker refuses to boot.
 */
@Module({})
export class WorkerModule {
  static forRoot(options: WorkerModuleOptions): DynamicModule {
    return {
      module: WorkerModule,
      controllers: [StepReadyController],
      providers: [
        { provide: WORKER_MODULE_OPTIONS, useValue: options },
        {
          provide: StepHarnessRegistry,
          inject: [WORKER_MODULE_OPTIONS],
          useFactory: (o: WorkerModuleOptions) =>
            new StepHarnessRegistry({
              handlers: o.handlers,
              store: o.store,
              publisher: o.broker,
              artifacts: o.artifacts,
              logger: o.logger,
              ...(o.clock === undefined ? {} : { clock: o.clock }),
              ...(o.owner === undefined ? {} : { owner: o.owner }),
              ...(o.policy === undefined ? {} : { policy: o.policy }),
              ...(o.metrics === undefined ? {} : { metrics: o.metrics }),
              ...(o.stepTypes === undefined ? {} : { stepTypes: o.stepTypes }),
              ...(o.checkpoints === undefined ? {} : { checkpoints: o.checkpoints }),
            }),
        },
        RegistryLifecycle,
      ],
      exports: [StepHarnessRegistry],
    };
  }
}
