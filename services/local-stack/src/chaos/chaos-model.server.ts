import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { textResponseBody, validReportOutput } from '@tda/llm/testing';
import type { ChaosController } from './chaos-controller';
import { REPORT_STEP, type Timeframe } from './chaos-plan';

/**
 * The generateContent endpoint the LLM worker process talks to (through the real Gemini client,
 * TDA_GEMINI_BASE_URL). Every request is attributed to its run and report step (the user turn
 * names both), counted, and answered as the run's plan says:
 * - answer: a valid llm_report_output_v1, deterministic per run and timeframe;
 * - invalid: text that is not JSON (the pipeline's one repair call follows);
 * - hang: no answer until the client gives up (its request deadline);
 * - hold: no answer until the test releases the step (a kill or a cancel happens meanwhile).
 */
export type ModelBehaviour = 'answer' | 'invalid' | 'hang' | 'hold';

export interface ModelCall {
  runId: string;
  timeframe: Timeframe | undefined;
  stepId: string | undefined;
  /** The structured-output repair call (seed 002: at most one per execution). */
  repair: boolean;
  behaviour: ModelBehaviour;
  /** An answer was written (answer / invalid). */
  answered: boolean;
  /** The client went away before an answer (deadline, abort, killed process). */
  aborted: boolean;
  at: number;
}

interface Waiter {
  match: (call: ModelCall) => boolean;
  resolve: (call: ModelCall) => void;
}

const PATH = /\/models\/[^/:]+:generateContent$/;

export class ChaosModelServer {
  readonly calls: ModelCall[] = [];
  private readonly held = new Map<string, Set<() => void>>();
  private readonly released = new Set<string>();
  private readonly waiters: Waiter[] = [];
  private readonly open = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    private readonly chaos: ChaosController,
  ) {}

  static async start(chaos: ChaosController): Promise<ChaosModelServer> {
    let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    const server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const model = new ChaosModelServer(server, `http://127.0.0.1:${port}`, chaos);
    handler = (req, res) => model.handle(req, res);
    return model;
  }

  /** Resolves with the first call (past or future) that matches. */
  waitForCall(match: (call: ModelCall) => boolean): Promise<ModelCall> {
    const seen = this.calls.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Ends a hold: calls held for the step are answered, later ones too. */
  release(runId: string, timeframe: Timeframe): void {
    const key = `${runId}|${timeframe}`;
    this.released.add(key);
    for (const answer of this.held.get(key) ?? []) answer();
    this.held.delete(key);
  }

  callsFor(runId: string, timeframe: Timeframe): ModelCall[] {
    return this.calls.filter((c) => c.runId === runId && c.timeframe === timeframe);
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private behaviourFor(
    runId: string,
    timeframe: Timeframe | undefined,
    repair: boolean,
  ): ModelBehaviour {
    const plan = this.chaos.planFor(runId);
    if (plan === undefined || timeframe === undefined || repair) return 'answer';
    const key = `${runId}|${timeframe}`;
    const first = this.chaos.next(`model:${key}`) === 0;
    const holds =
      (plan.kill?.moment === 'model_call' && plan.kill.timeframe === timeframe) ||
      (plan.writer?.mode === 'cancel' && plan.writer.timeframe === timeframe);
    if (holds && !this.released.has(key)) return 'hold';
    if (plan.hang?.timeframe === timeframe) {
      if (plan.hang.mode === 'persistent' || first) return 'hang';
    }
    if (plan.badOutput?.timeframe === timeframe && first) return 'invalid';
    return 'answer';
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !PATH.test(new URL(req.url ?? '/', 'http://x').pathname)) {
        send(res, 404, { error: { code: 404, message: 'no such route', status: 'NOT_FOUND' } });
        return;
      }
      const texts = textsOf(Buffer.concat(chunks).toString('utf8'));
      const runId = /^- Run: (\S+)/m.exec(texts[0] ?? '')?.[1] ?? '';
      const tf = /^- Timeframe: (\S+)/m.exec(texts[0] ?? '')?.[1];
      const timeframe: Timeframe | undefined = tf === '1M' || tf === '1w' ? tf : undefined;
      const repair = texts.some((t) => t.startsWith('## Structured output repair'));
      const behaviour = this.behaviourFor(runId, timeframe, repair);
      const call: ModelCall = {
        runId,
        timeframe,
        stepId: timeframe === undefined ? undefined : REPORT_STEP[timeframe],
        repair,
        behaviour,
        answered: false,
        aborted: false,
        at: Date.now(),
      };
      this.calls.push(call);
      if (behaviour === 'hang' || behaviour === 'invalid') {
        this.chaos.record({
          kind: behaviour === 'hang' ? 'model_hang' : 'model_bad_output',
          runId,
          ...(call.stepId === undefined ? {} : { stepId: call.stepId }),
          action: behaviour,
        });
      }
      this.open.add(res);
      res.on('close', () => {
        this.open.delete(res);
        if (!call.answered) call.aborted = true;
      });
      for (const waiter of this.waiters.filter((w) => w.match(call))) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(call);
      }
      const answer = (kind: 'answer' | 'invalid'): void => {
        if (res.destroyed || res.writableEnded) return;
        call.answered = true;
        const text =
          kind === 'invalid'
            ? '{"summary": {"markdown": "cut off'
            : JSON.stringify(
                validReportOutput(
                  `## ${timeframe ?? '?'} chaos report\n\nRun ${runId}: deterministic model answer.`,
                ),
              );
        send(
          res,
          200,
          textResponseBody(text, {
            responseId: `chaos-${runId}-${timeframe ?? 'x'}${repair ? '-repair' : ''}`,
            modelVersion: 'chaos-model-001',
          }),
        );
      };
      switch (behaviour) {
        case 'hang':
          return;
        case 'hold': {
          const key = `${runId}|${timeframe ?? ''}`;
          const waiting = this.held.get(key) ?? new Set<() => void>();
          waiting.add(() => answer('answer'));
          this.held.set(key, waiting);
          return;
        }
        case 'invalid':
        case 'answer':
          answer(behaviour);
          return;
      }
    });
  }
}

function textsOf(raw: string): string[] {
  try {
    const body = JSON.parse(raw) as { contents?: { parts?: { text?: unknown }[] }[] };
    return (body.contents ?? [])
      .flatMap((content) => content.parts ?? [])
      .flatMap((part) => (typeof part.text === 'string' ? [part.text] : []));
  } catch {
    return [];
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}
