import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import { LLM_REPORT_STEP } from '@tda/step-types';
import { describe, expect, it } from 'vitest';
import { llmReportHarnessPolicy, type LlmReportConfig } from './config';
import { llmReportWorker } from './llm-report.worker';

/** The config exactly as the worker's boot validates it (bootstrapWorker → loadConfig). */
function loadLlmReportConfig(env: EnvSource): LlmReportConfig {
  return loadConfig(llmReportWorker.descriptor.service, llmReportWorker.configSchema, env);
}

describe('worker-llm-report config', () => {
  it('is the config of the worker-llm-report service (LLM_REPORT steps)', () => {
    expect(llmReportWorker.descriptor).toBe(LLM_REPORT_STEP);
    expect(llmReportWorker.descriptor).toMatchObject({
      service: 'worker-llm-report',
      stepType: 'LLM_REPORT',
    });
  });

  it('defaults to memory, no LLM credentials and the seed 002 timeout policy', () => {
    const config = loadLlmReportConfig({});
    expect(config).toMatchObject({
      TDA_BACKEND: 'memory',
      TDA_LLM_STEP_TIMEOUT_SECONDS: 780,
      TDA_LLM_REQUEST_DEADLINE_SECONDS: 600,
      TDA_LLM_FINALIZE_BUDGET_SECONDS: 120,
    });
    expect(config.GEMINI_API_KEY).toBeUndefined();
  });

  it('reads the LLM and timeout settings', () => {
    expect(
      loadLlmReportConfig({
        GEMINI_API_KEY: 'k-123',
        TDA_GEMINI_BASE_URL: 'http://127.0.0.1:9999',
        TDA_LLM_STEP_TIMEOUT_SECONDS: '300',
        TDA_LLM_REQUEST_DEADLINE_SECONDS: '120',
        TDA_LLM_FINALIZE_BUDGET_SECONDS: '60',
      }),
    ).toMatchObject({
      GEMINI_API_KEY: 'k-123',
      TDA_GEMINI_BASE_URL: 'http://127.0.0.1:9999',
      TDA_LLM_STEP_TIMEOUT_SECONDS: 300,
      TDA_LLM_REQUEST_DEADLINE_SECONDS: 120,
      TDA_LLM_FINALIZE_BUDGET_SECONDS: 60,
    });
  });

  it('refuses non-numeric timeouts with a ConfigError naming the key', () => {
    let error: unknown;
    try {
      loadLlmReportConfig({ TDA_LLM_REQUEST_DEADLINE_SECONDS: 'soon' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).service).toBe('worker-llm-report');
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toContain('TDA_LLM_REQUEST_DEADLINE_SECONDS');
  });

  it('takes the step timeout from TDA_LLM_STEP_TIMEOUT_SECONDS, else TDA_STEP_TIMEOUT_SECONDS, else the policy', () => {
    expect(loadLlmReportConfig({ TDA_STEP_TIMEOUT_SECONDS: '400' })).toMatchObject({
      TDA_STEP_TIMEOUT_SECONDS: 400,
      TDA_LLM_STEP_TIMEOUT_SECONDS: 400,
    });
    expect(
      loadLlmReportConfig({ TDA_STEP_TIMEOUT_SECONDS: '400', TDA_LLM_STEP_TIMEOUT_SECONDS: '500' })
        .TDA_LLM_STEP_TIMEOUT_SECONDS,
    ).toBe(500);
    expect(loadLlmReportConfig({}).TDA_LLM_STEP_TIMEOUT_SECONDS).toBe(780);
  });

  it('is the policy the worker definition hands the harness', () => {
    const config = loadLlmReportConfig({ TDA_LLM_STEP_TIMEOUT_SECONDS: '300' });
    expect(llmReportWorker.policy?.(config)).toEqual({ timeoutMs: 300_000 });
  });

  it('hands the effective step timeout to the harness in whole milliseconds', () => {
    expect(llmReportHarnessPolicy(loadLlmReportConfig({}))).toEqual({ timeoutMs: 780_000 });
    expect(
      llmReportHarnessPolicy(loadLlmReportConfig({ TDA_STEP_TIMEOUT_SECONDS: '400.0004' })),
    ).toEqual({ timeoutMs: 400_000 });
  });

  it('checks the finalize budget against the effective step timeout', () => {
    expect(() => loadLlmReportConfig({ TDA_STEP_TIMEOUT_SECONDS: '100' })).toThrow(
      /TDA_LLM_FINALIZE_BUDGET_SECONDS: must be less than the step timeout \(100 s/,
    );
    // the LLM-specific timeout wins, so the shared one does not matter then
    expect(
      loadLlmReportConfig({ TDA_STEP_TIMEOUT_SECONDS: '100', TDA_LLM_STEP_TIMEOUT_SECONDS: '300' })
        .TDA_LLM_STEP_TIMEOUT_SECONDS,
    ).toBe(300);
  });

  it('refuses a finalize budget not below the step timeout', () => {
    expect(() =>
      loadLlmReportConfig({
        TDA_LLM_STEP_TIMEOUT_SECONDS: '100',
        TDA_LLM_FINALIZE_BUDGET_SECONDS: '120',
      }),
    ).toThrow(/TDA_LLM_FINALIZE_BUDGET_SECONDS/);
  });
});
