import 'reflect-metadata';
import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import type { FlowRun, NewsExport } from '@tda/contracts';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { createMemoryLogger } from '@tda/observability';
import { bootstrapWorker } from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { newsExportWorker } from './news-export.worker';
import { fixture, startStubNewsServer, stubReply } from './testing/stub-news-server';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const STEP_ID = 'news_export';
const AS_OF = '2026-09-20T00:00:00Z';
const TOKEN = 'feed-t0ken-s3cret';

function loadNewsConfig(env: EnvSource) {
  return loadConfig(newsExportWorker.descriptor.service, newsExportWorker.configSchema, env);
}

function runWithNewsStep(inputs: Record<string, unknown> = {}): FlowRun {
  return makeFlowRun({
    status: 'RUNNING',
    scope: { symbol: 'BTC-USDT', asOf: AS_OF },
    steps: { [STEP_ID]: makeStep({ stepType: 'NEWS_EXPORT', status: 'READY', inputs }) },
  });
}

async function boot(extraEnv: Record<string, string>) {
  const memory = await memoryWorkerEnv({ TDA_STEP_RETRY_TRIES: '1', ...extraEnv });
  cleanups.push(() => memory.cleanup());
  const log = createMemoryLogger({ service: 'worker-news-export', level: 'debug' });
  const handle = await bootstrapWorker(newsExportWorker, { env: memory.env, logger: log.logger });
  cleanups.push(() => handle.close());
  const run = async (flowRun: FlowRun) => {
    await handle.backends.store.create(flowRun);
    const step = await deliverStep(handle, {
      runId: flowRun.runId,
      stepId: STEP_ID,
      stepType: 'NEWS_EXPORT',
    });
    const uri = step.outputs.gcs_uri;
    const news =
      uri === undefined
        ? undefined
        : (JSON.parse((await handle.backends.artifacts.read(uri)).toString('utf8')) as NewsExport);
    return { step, news };
  };
  return { handle, log, run };
}

async function stubServer(routes: Parameters<typeof startStubNewsServer>[0]) {
  const server = await startStubNewsServer(routes);
  cleanups.push(() => server.close());
  return server;
}

describe('newsExportWorker config', () => {
  it('no provider by default; the official GDELT endpoint; 10 s per request', () => {
    expect(loadNewsConfig({})).toMatchObject({
      TDA_NEWS_PROVIDER: 'none',
      TDA_NEWS_FEEDS: [],
      TDA_NEWS_GDELT_URL: 'https://api.gdeltproject.org/api/v2/doc/doc',
      TDA_NEWS_TIMEOUT_MS: 10_000,
    });
    expect(
      loadNewsConfig({ TDA_NEWS_FEEDS: ' https://a.example/rss , ,https://b.example/atom ' })
        .TDA_NEWS_FEEDS,
    ).toEqual(['https://a.example/rss', 'https://b.example/atom']);
  });

  it('rss without feeds, or a feed that is not an http(s) URL, is a ConfigError that echoes no value', () => {
    const problems = (env: EnvSource): string => {
      try {
        loadNewsConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return JSON.stringify({ message: (error as Error).message, error });
      }
      throw new Error('no ConfigError');
    };
    expect(problems({ TDA_NEWS_PROVIDER: 'rss' })).toMatch(
      /TDA_NEWS_FEEDS: is required with TDA_NEWS_PROVIDER=rss/,
    );
    const shown = problems({ TDA_NEWS_PROVIDER: 'rss', TDA_NEWS_FEEDS: `file:///etc/${TOKEN}` });
    expect(shown).toMatch(/every feed must be an http\(s\) URL/);
    expect(shown).not.toContain(TOKEN);
  });
});

describe('newsExportWorker (booted, memory backend)', () => {
  it('provider none: SUCCEEDED with zero items, and the artifact says so', async () => {
    const { run, log } = await boot({});
    const { step, news } = await run(runWithNewsStep());
    expect(step.status).toBe('SUCCEEDED');
    expect(news).toMatchObject({ provider: 'none', items: [], sources: [] });
    expect(news?.note).toMatch(/TDA_NEWS_PROVIDER=none/);
    expect(step.outputs.execution).toMatchObject({ news: { provider: 'none', items: 0 } });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'NEWS_EXPORT',
      newsProvider: 'none',
    });
  });

  it('rss: the feeds’ headlines in the window, none after asOf; a feed URL’s token is never shown', async () => {
    const server = await stubServer({
      '/rss': stubReply.xml(fixture('cryptodesk.rss.xml')),
      '/atom': stubReply.xml(fixture('chainwire.atom.xml')),
    });
    const { run, log } = await boot({
      TDA_NEWS_PROVIDER: 'rss',
      TDA_NEWS_FEEDS: `${server.url}/rss?token=${TOKEN},${server.url}/atom`,
    });
    const { step, news } = await run(runWithNewsStep({ maxItems: 5 }));
    expect(step.status).toBe('SUCCEEDED');
    expect(news?.provider).toBe('rss');
    expect(news?.items).toHaveLength(5);
    for (const item of news?.items ?? []) {
      expect(Date.parse(item.publishedAt)).toBeLessThanOrEqual(Date.parse(AS_OF));
    }
    expect(news?.counts).toMatchObject({ droppedAfterAsOf: 2, overCap: 4 });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      newsProvider: 'rss',
      newsFeedHosts: [new URL(server.url).host, new URL(server.url).host],
    });
    expect(JSON.stringify([log.records, news, step])).not.toContain(TOKEN);
  });

  it('gdelt down (503): FAILED UPSTREAM_UNAVAILABLE, retryable; a 404 endpoint: not retryable', async () => {
    const server = await stubServer({
      '/down': stubReply.status(503),
      '/missing': stubReply.status(404),
    });
    const down = await boot({
      TDA_NEWS_PROVIDER: 'gdelt',
      TDA_NEWS_GDELT_URL: `${server.url}/down`,
    });
    const failed = await down.run(runWithNewsStep());
    expect(failed.step.status).toBe('FAILED');
    expect(failed.news).toBeUndefined();
    expect(failed.step.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(failed.step.error?.message).toMatch(/^gdelt 127\.0\.0\.1:\d+: HTTP 503$/);
    const missing = await boot({
      TDA_NEWS_PROVIDER: 'gdelt',
      TDA_NEWS_GDELT_URL: `${server.url}/missing`,
    });
    const refused = await missing.run(runWithNewsStep());
    expect(refused.step.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: false });
    // The request URL (its query holds the search) is in no error.
    expect(JSON.stringify(refused.step.error)).not.toContain('startdatetime');
  });
});
