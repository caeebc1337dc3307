import { validate, type LlmRecommendation } from '@tda/contracts';

/** At most this many headlines are cited (the output schema allows 5). */
const MAX_NEWS_CITATIONS = 3;

/**
 * Flow 6 for the offline recommender: it does not read text, so headlines never change its action
 * or size; it says how many there were and cites the most recent by url as background. Nothing
 * of a headline's text is copied into the output (untrusted third-party text). An artifact that
 * is not a news_export is ignored, as if the step had none.
 */
export function withOfflineNews(
  recommendation: LlmRecommendation,
  news: unknown,
): LlmRecommendation {
  if (news === undefined) return recommendation;
  const checked = validate.newsExport(news);
  if (!checked.ok) return recommendation;
  const { items, provider } = checked.value;
  const cited = items.slice(0, MAX_NEWS_CITATIONS);
  const sentence =
    items.length === 0
      ? `News: no headlines in the window before asOf (provider ${provider}).`
      : `News: ${items.length} headline(s) in the window before asOf (provider ${provider}), the most recent from ${cited[0]?.source ?? 'an unknown source'} at ${cited[0]?.publishedAt ?? 'an unknown time'}. They are background only: the offline recommender weighs the reports, not headlines.`;
  return {
    ...recommendation,
    rationale: {
      ...recommendation.rationale,
      summary: `${recommendation.rationale.summary}\n\n${sentence}`,
      ...(cited.length === 0
        ? {}
        : {
            newsCitations: cited.map((item) => ({
              url: item.url,
              claim: `A ${item.source} headline published ${item.publishedAt}, read as background; it does not change the levels or the size.`,
            })),
          }),
    },
  };
}
