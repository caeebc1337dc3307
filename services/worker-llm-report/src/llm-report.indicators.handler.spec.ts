import type { FlowRun } from '@tda/contracts';
import { applyPatch, stepPatch } from '@tda/flow-engine';
import {
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  InMemoryPromptRegistry,
  LlmStepRuntime,
  OfflineAnalystClient,
  type LlmClient,
  type LlmRequest,
} from '@tda/llm';
import { jsonResponse, ScriptedLlmClient, validReportOutput } from '@tda/llm/testing';
import { LLM_REPORT_STEP } from '@tda/step-types';
import { StepError } from '@tda/worker-kit';
import { requireHandlerContext } from '@tda/worker-kit/testing';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { LlmReportHandler } from './llm-report.handler';
import { FIXTURE_NOW, flowFixture, REPORT_1W } from './testing/llm-report.fixtures';

/**
 * Flow 5 in the LLM_REPORT handler: a report whose output format is llm_report_output_v2 sees the
 * indicator catalogue in its prompt, and a request it makes is checked (repaired once when it
 * leaves the catalogue) and handed to the orchestrator normalized in outputs.indicatorRequests.
 */
const ASKING = (run: FlowRun, depth?: number): FlowRun => {
  const step = run.steps[REPORT_1W];
  const llm = step?.inputs['llm'] as { llmProfile: Record<string, unknown> };
  const asking = applyPatch(
    run,
    stepPatch(REPORT_1W, {
      inputs: {
        ...step?.inputs,
        llm: {
          promptId: 'prompt_multi_tf_indicators_v1',
          llmProfile: { ...llm.llmProfile, structuredOutput: { schemaId: 'llm_report_output_v2' } },
        },
      },
      ...(depth === undefined ? {} : { addedBy: { stepId: 'llm_report:1M:x', depth } }),
    }),
  );
  return { ...asking, expansionLimits: { maxDynamicSteps: 12, maxDepth: 1 } };
};

async function setup(client: LlmClient, depth?: number) {
  const fixture = await flowFixture();
  const runtime = new LlmStepRuntime({
    registry: new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS, schemas: DEFAULT_SCHEMAS }),
    client,
    sleep: async () => undefined,
  });
  const context = requireHandlerContext(LLM_REPORT_STEP, {
    run: ASKING(fixture.run, depth),
    stepId: REPORT_1W,
    artifacts: fixture.artifacts,
    deadline: new Date(FIXTURE_NOW.getTime() + 780_000),
    now: () => FIXTURE_NOW,
  });
  return { handler: new LlmReportHandler(runtime), context };
}

function promptText(request: LlmRequest | undefined): string {
  return (request?.contents ?? []).map((part) => ('text' in part ? part.text : '')).join('\n');
}

const withRequest = (indicators: unknown[]): Record<string, unknown> => ({
  ...validReportOutput(),
  indicatorRequests: [{ timeframe: '1w', indicators }],
});

describe('LlmReportHandler, flow 5 indicator requests', () => {
  it('lists the catalogue and hands a checked request to the orchestrator, defaults filled', async () => {
    const client = new ScriptedLlmClient([
      jsonResponse(withRequest([{ name: 'ATR' }, { name: 'MACD', params: { fast: 8 } }])),
    ]);
    const { handler, context } = await setup(client);
    const result = await handler.execute(context);
    expect(result.outputs?.['indicatorRequests']).toEqual([
      {
        timeframe: '1w',
        indicators: [
          { name: 'ATR', params: { period: 14 } },
          { name: 'MACD', params: { fast: 8, slow: 26, signal: 9 } },
        ],
      },
    ]);
    const prompt = promptText(client.requests[0]);
    expect(prompt).toContain('Indicators you may request');
    expect(prompt).toMatch(/- ATR \(Average True Range\): period integer 2\.\.100 \(default 14\)/);
    expect(prompt).toContain('timeframe: one of 1M, 1w');
  });

  it('repairs a request outside the catalogue once, then fails with INVALID_STRUCTURED_OUTPUT', async () => {
    const bad = withRequest([{ name: 'RSI', params: { period: 1000 } }]);
    const client = new ScriptedLlmClient([jsonResponse(bad), jsonResponse(bad)]);
    const { handler, context } = await setup(client);
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({ code: 'INVALID_STRUCTURED_OUTPUT' });
    expect(client.calls).toBe(2);
    expect(promptText(client.requests[1])).toContain('indicator_request_outside_catalogue');
  });

  it('tells a step at the run’s expansion depth that it may not ask, and refuses a request', async () => {
    const client = new ScriptedLlmClient([
      jsonResponse(withRequest([{ name: 'ATR' }])),
      jsonResponse(validReportOutput()),
    ]);
    const { handler, context } = await setup(client, 1);
    const result = await handler.execute(context);
    expect(promptText(client.requests[0])).toContain('Indicators you may request: none');
    expect(result.outputs?.['indicatorRequests']).toBeUndefined();
    expect(client.calls).toBe(2);
  });

  it('the offline analyst asks for what its charts do not show', async () => {
    const { handler, context } = await setup(new OfflineAnalystClient());
    const result = await handler.execute(context);
    expect(result.outputs?.['indicatorRequests']).toEqual([
      {
        timeframe: '1w',
        indicators: [
          { name: 'ATR', params: { period: 14 } },
          { name: 'ADX', params: { period: 14 } },
          { name: 'STOCHASTIC', params: { k: 14, d: 3 } },
          { name: 'OBV', params: {} },
        ],
      },
    ]);
  });
});
