import { validate, type NewsExport } from '@tda/contracts';
import {
  fixture,
  startStubNewsServer,
  stubReply,
  type StubNewsServer,
} from '@tda/service-worker-news-export/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectValidArtifacts } from './testing/artifact-checks';
import { startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';

/**
 * Flow 6 end to end on the emulators: the news worker reads two stored feeds (RSS and Atom, in
 * their documented formats, with a hostile headline and items after asOf) from a local server,
 * and the offline recommender cites headlines by url as background.
 */

const AS_OF = '2026-09-20T00:00:00Z';
const RECO = 'llm_reco:prompt_reco_news_v1:model_gemini_2_5_flash';

async function readJson(h: E2eStack, uri: string | undefined): Promise<unknown> {
  return JSON.parse((await h.stack.backends.artifacts.read(uri ?? '')).toString('utf8'));
}

describe('flow 6: news end to end (emulators, stored feeds)', () => {
  let feeds: StubNewsServer;
  let h: E2eStack;
  beforeAll(async () => {
    feeds = await startStubNewsServer();
    feeds.route('/cryptodesk.xml', stubReply.xml(fixture('cryptodesk.rss.xml')));
    feeds.route('/chainwire.xml', stubReply.xml(fixture('chainwire.atom.xml')));
    h = await startE2eStack({
      name: 'flow6',
      env: {
        TDA_NEWS_PROVIDER: 'rss',
        TDA_NEWS_FEEDS: `${feeds.url}/cryptodesk.xml,${feeds.url}/chainwire.xml`,
      },
    });
  });
  afterAll(async () => {
    await h?.stack.close();
    await feeds?.close();
  });

  it('the recommendation cites news from the feeds, and no item is after asOf', async () => {
    const { run: created } = await h.api.trigger({
      flowKey: 'recommendation_with_news_v1',
      scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: AS_OF },
    });
    const run = await waitForRunStatus(h.api, created.runId, 'SUCCEEDED', 120_000);
    await expectValidArtifacts(h.stack, run);
    const news = validate.newsExport(await readJson(h, run.steps['news_export']?.outputs.gcs_uri));
    if (!news.ok) throw new Error('invalid news export');
    const items: NewsExport['items'] = news.value.items;
    expect(news.value.provider).toBe('rss');
    expect(items.length).toBeGreaterThan(3);
    for (const item of items)
      expect(Date.parse(item.publishedAt)).toBeLessThanOrEqual(Date.parse(AS_OF));
    expect(feeds.requests.length).toBeGreaterThanOrEqual(2);

    const file = validate.llmRecommendationFile(
      await readJson(h, run.steps[RECO]?.outputs.gcs_uri),
    );
    if (!file.ok) throw new Error('invalid recommendation');
    const cited = file.value.output.rationale.newsCitations ?? [];
    expect(cited.length).toBeGreaterThan(0);
    for (const citation of cited) expect(items.map((i) => i.url)).toContain(citation.url);
    expect(file.value.metadata.inputs.newsGcsUri).toBe(run.steps['news_export']?.outputs.gcs_uri);
    expect(JSON.stringify(file.value.output)).not.toContain('Ignore previous instructions');
  }, 150_000);
});
