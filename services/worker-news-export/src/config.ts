import { refineGoogleBackend } from '@tda/config';
import { refineWorkerIngress, workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';
import { GDELT_DOC_API } from './providers/gdelt-news.provider';

/** At most this many feeds (each one is a request per step, all at once). */
export const MAX_FEEDS = 10;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const httpUrl = z.string().trim().refine(isHttpUrl, 'must be an http(s) URL');

/** `a, b` → [a, b]; unset or empty → []. Each must be an http(s) URL (the message never echoes one). */
const feedList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== ''),
  )
  .pipe(
    z
      .array(z.string().refine(isHttpUrl, 'every feed must be an http(s) URL'))
      .max(MAX_FEEDS, `at most ${MAX_FEEDS} feeds`),
  );

/**
 * The NEWS_EXPORT worker's environment, validated at boot (DESIGN.md §7). The provider is off by
 * default: a step then succeeds with zero items and says so. Feed URLs may carry a token in their
 * query: they are never logged or written (artifacts and service_started name hosts only).
 */
export const newsExportConfigSchema = z
  .object({
    /** Backend env, PORT, TDA_LOG_LEVEL, TDA_STEP_* and the ingress, shared by every worker. */
    ...workerServiceEnv,
    /** `none` (zero items, said so), `rss` (TDA_NEWS_FEEDS) or `gdelt` (the GDELT DOC 2.0 API). */
    TDA_NEWS_PROVIDER: z.enum(['none', 'rss', 'gdelt']).default('none'),
    /** Comma-separated RSS 2.0 / RSS 1.0 / Atom feed URLs; required with TDA_NEWS_PROVIDER=rss. */
    TDA_NEWS_FEEDS: feedList,
    /** The DOC 2.0 API endpoint (tests: a local stub). */
    TDA_NEWS_GDELT_URL: httpUrl.default(GDELT_DOC_API),
    /** Timeout of one request to a feed or to GDELT. */
    TDA_NEWS_TIMEOUT_MS: z.coerce.number().int().min(500).max(30_000).default(10_000),
    /** Answers larger than this are refused (a feed is tens of KB). */
    TDA_NEWS_MAX_RESPONSE_BYTES: z.coerce
      .number()
      .int()
      .min(10_000)
      .max(20_000_000)
      .default(2_000_000),
  })
  .superRefine(refineGoogleBackend)
  .superRefine(refineWorkerIngress)
  .superRefine((config, ctx) => {
    if (config.TDA_NEWS_PROVIDER === 'rss' && config.TDA_NEWS_FEEDS.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['TDA_NEWS_FEEDS'],
        message: 'is required with TDA_NEWS_PROVIDER=rss (comma-separated feed URLs)',
      });
    }
  });

export type NewsExportConfig = z.infer<typeof newsExportConfigSchema>;
