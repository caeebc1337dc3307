import type { BlockedReason } from '@tda/flow-engine';
import type { BlockedOn } from '../api/api-types';
import { formatDuration, formatTimestamp } from './format';

/** One sentence of "why is it not running?", with the steps it names (the page links them). */
export interface PlainReason {
  text: string;
  stepIds: string[];
  /** Something is wrong (a failed dependency, an expired lease), not just waiting. */
  warning: boolean;
}

function plain(text: string, stepIds: string[] = [], warning = false): PlainReason {
  return { text, stepIds, warning };
}

function queued(reason: Extract<BlockedReason, { kind: 'queued' }>): PlainReason {
  const where = `The run is queued: position ${reason.position} of ${reason.queueLength}.`;
  if (reason.admissible)
    return plain(`${where} A slot is free; it starts with the next admission pass.`);
  const waits = reason.waitingFor.map((w) =>
    w.kind === 'running_limit'
      ? `all ${w.limit} run slots are taken`
      : `its owner already has ${w.running} of ${w.limit} allowed runs running`,
  );
  return plain(`${where} It waits because ${waits.join(' and ')}.`);
}

function running(reason: Extract<BlockedReason, { kind: 'running' }>): PlainReason {
  const who = reason.leaseOwner === undefined ? 'a worker' : `worker ${reason.leaseOwner}`;
  const until =
    reason.leaseExpiresAt === undefined
      ? ''
      : `, holding it until ${formatTimestamp(reason.leaseExpiresAt)}`;
  if (reason.expired) {
    return plain(
      `Attempt ${reason.attempt} was taken by ${who} but its lease has expired: the worker probably stopped. The reconciler takes the step back and retries it.`,
      [],
      true,
    );
  }
  return plain(`It is running: attempt ${reason.attempt} on ${who}${until}.`);
}

function waiting(
  reason: Extract<BlockedReason, { kind: 'waiting_for_dependencies' }>,
): PlainReason[] {
  const deps = reason.dependencies.map((d) => `${d.stepId} (${d.status.toLowerCase()})`);
  const out = [
    plain(
      `It waits for ${deps.join(', ')} to finish.`,
      reason.dependencies.map((d) => d.stepId),
    ),
  ];
  const upstream = reason.frontier.filter(
    (f) => !reason.dependencies.some((d) => d.stepId === f.stepId),
  );
  if (upstream.length > 0) {
    out.push(
      plain(
        `Work is happening further upstream in ${upstream.map((f) => `${f.stepId} (${f.status.toLowerCase()})`).join(', ')}.`,
        upstream.map((f) => f.stepId),
      ),
    );
  }
  return out;
}

function describe(reason: BlockedReason): PlainReason[] {
  switch (reason.kind) {
    case 'step_terminal':
      return [
        plain(
          `It has finished: ${reason.status.toLowerCase()}${reason.errorCode === undefined ? '' : ` with ${reason.errorCode}`}${reason.finishedAt === undefined ? '' : ` at ${formatTimestamp(reason.finishedAt)}`}.`,
          [],
          reason.status === 'FAILED',
        ),
      ];
    case 'run_not_running':
      return [plain(`The run is ${reason.runStatus.toLowerCase()}, so nothing more starts.`)];
    case 'cancel_requested':
      return [
        plain(`Cancel was requested at ${formatTimestamp(reason.cancelRequestedAt)}.`, [], true),
      ];
    case 'deadline_passed':
      return [
        plain(`The run's deadline (${formatTimestamp(reason.deadlineAt)}) has passed.`, [], true),
      ];
    case 'unknown_dependency':
      return [
        plain(
          `It depends on steps that do not exist: ${reason.dependencies.join(', ')}.`,
          [],
          true,
        ),
      ];
    case 'dependency_failed':
      return [
        plain(
          `It cannot run: ${reason.stepId} is ${reason.status.toLowerCase()}.`,
          [reason.stepId],
          true,
        ),
      ];
    case 'dependency_skipped':
      return [plain(`It will not run: ${reason.stepId} was skipped.`, [reason.stepId])];
    case 'waiting_for_dependencies':
      return waiting(reason);
    case 'awaiting_advance':
      return [plain('Everything it needs is done; the orchestrator marks it ready in a moment.')];
    case 'queued':
      return [queued(reason)];
    case 'running':
      return [running(reason)];
    case 'ready_not_claimed':
      return [
        plain(
          `It is ready${reason.waitingMs === undefined ? '' : ` since ${formatDuration(reason.waitingMs)}`} and waits for a worker to pick it up. If this lasts, that worker may be down or busy; the reconciler publishes it again.`,
        ),
      ];
  }
}

/**
 * "Why is it not running?" in plain words, from GET …/blocked-on. The document types the reasons
 * only by `kind`; their fields are the flow engine's BlockedReason (the server's own type). A
 * reason this console does not know yet falls back to the server's one-line summary.
 */
export function plainReasons(explanation: BlockedOn): PlainReason[] {
  const reasons = explanation.reasons as unknown as BlockedReason[];
  const out: PlainReason[] = [];
  for (const reason of reasons) {
    const described = describe(reason) as PlainReason[] | undefined;
    if (described === undefined) return [plain(explanation.summary)];
    out.push(...described);
  }
  return out.length > 0 ? out : [plain(explanation.summary)];
}
