import { VersionConflictError, type FlowRunStore } from '@tda/flow-store';

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/**
 * A concurrent writer on one run document, as another process patching an unrelated field would
 * be: every `intervalMs` (±50 %, seeded) it reads the run and writes back a patch that changes no
 * field the flow uses (the store stamps `updatedAt`), conditionally on the version it read. Each
 * successful touch gives the document a new version, so the orchestrator's and the workers'
 * in-flight conditional writes fail their precondition and must re-read and re-decide.
 */
export class RogueWriter {
  writes = 0;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly store: FlowRunStore,
    private readonly runId: string,
    private readonly intervalMs: number,
    private readonly random: () => number,
  ) {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs * (0.5 + this.random())));
      if (this.stopped) return;
      const read = await this.store.get(this.runId).catch(() => null);
      if (read === null) continue;
      if (TERMINAL.has(read.run.status)) return;
      try {
        await this.store.update(this.runId, { updatedAt: read.run.updatedAt }, read.version);
        this.writes += 1;
      } catch (error) {
        // A write of its own that lost a race is not retried: the next tick reads again.
        if (!(error instanceof VersionConflictError)) throw error;
      }
    }
  }
}
