import { expectEventually } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import {
  expectNoSideEffects,
  first,
  harnessFixtures,
  OHLCV,
  REPORT,
} from '../testing/harness-fixture';

const fixture = harnessFixtures();

describe('StepHarness — redelivery bound and infrastructure errors', () => {
  it('deliveryAttempt over maxDeliveryAttempts → FAILED RETRIES_EXHAUSTED without executing', async () => {
    const f = await fixture({ policy: { maxDeliveryAttempts: 10 } });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 11 });
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'RETRIES_EXHAUSTED',
    });
    expect(f.handler.executions).toBe(0);
    expect((await f.step(OHLCV)).error).toMatchObject({
      code: 'RETRIES_EXHAUSTED',
      details: { deliveryAttempt: 11, maxDeliveryAttempts: 10 },
    });
  });

  it('deliveryAttempt at the max still executes', async () => {
    const f = await fixture({ policy: { maxDeliveryAttempts: 10 } });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 10 });
    expect(outcome).toMatchObject({ kind: 'executed' });
  });

  it('the store unavailable on the claim read → throws (nack), nothing written', async () => {
    const f = await fixture();
    f.store.failNextGets(1);
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toThrow(
      'store unavailable',
    );
    expectNoSideEffects(f);
  });

  it('another writer landing between read and claim → re-read, re-decided, claimed once', async () => {
    const f = await fixture();
    f.store.onceBeforeNextUpdate(() =>
      f.writeAsOther({ [`steps.${REPORT}.inputs`]: { touched: true } }),
    );
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed' });
    expect(f.store.recorded.filter((u) => !u.ok)).toHaveLength(1);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.log.withEvent('step_claim_conflict')[0]).toMatchObject({
      attempts: 2,
      resolvedAs: 'written',
    });
  });

  it('conflicts beyond claimMaxAttempts → throws (nack)', async () => {
    const f = await fixture({ policy: { claimMaxAttempts: 2 } });
    const bump = (): Promise<void> =>
      f.writeAsOther({ [`steps.${REPORT}.inputs`]: { n: Math.random() } });
    f.store.onceBeforeNextUpdate(async () => {
      await bump();
      f.store.onceBeforeNextUpdate(bump);
    });
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toMatchObject({
      name: 'ConflictRetriesExhaustedError',
    });
    expect(f.store.writes).toBe(0);
    expect(f.handler.executions).toBe(0);
    expect(f.log.withEvent('step_claim_conflict')[0]).toMatchObject({ action: 'nack' });
  });

  it('a step event that cannot be published is logged; the durable finalize is still acked', async () => {
    const f = await fixture();
    f.publisher.failNextPublishes(3);
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', stepEventPublished: false });
    expect((await f.step(OHLCV)).status).toBe('SUCCEEDED');
    await expectEventually(() => {
      expect(
        f.log.records.some((r) => r.event === 'step_event_publish_failed' && r['ok'] === false),
      ).toBe(true);
    });
  });
});
