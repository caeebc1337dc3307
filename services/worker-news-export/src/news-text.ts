/**
 * Third-party text made safe to store and to show a model: plain text (no markup, no entities,
 * no control or invisible formatting characters), whitespace collapsed, length capped; links
 * http(s) only, without credentials, fragment or tracking parameters. Nothing here interprets the
 * text: a hostile headline stays a headline, and its readers treat it as untrusted data.
 */

export const TITLE_MAX = 180;
export const SUMMARY_MAX = 240;
export const URL_MAX = 400;

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  euro: '€',
  pound: '£',
  copy: '©',
  reg: '®',
  trade: '™',
};

function decodeEntities(text: string): string {
  return text.replace(
    /&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z][a-z0-9]{1,10});/gi,
    (_, body: string) => {
      if (body.startsWith('#')) {
        const code =
          body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : Number(body.slice(1));
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ' ';
      }
      return NAMED_ENTITIES[body.toLowerCase()] ?? ' ';
    },
  );
}

function stripTags(text: string): string {
  return text
    .replace(/<(script|style|iframe|object|noscript)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/?[a-z!?][^<>]*>/gi, ' ');
}

/**
 * Plain text of an HTML fragment (or of text that merely looks like one). Entities are decoded
 * after the tags went, then tags are stripped again: a feed that escaped its HTML twice
 * (`&lt;p&gt;`) leaves no markup either. Control, bidi and zero-width characters go too.
 */
export function plainText(html: string): string {
  let text = html;
  for (let pass = 0; pass < 3; pass += 1) {
    const next = stripTags(decodeEntities(stripTags(text)));
    if (next === text) break;
    text = next;
  }
  return text
    .replace(/[<>]/g, ' ')
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cs}\u2028\u2029]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** At most `max` code points; a cut text ends with an ellipsis (cut at a word when one is near). */
export function capText(text: string, max: number): string {
  const points = Array.from(text);
  if (points.length <= max) return text;
  const head = points.slice(0, max - 1).join('');
  const space = head.lastIndexOf(' ');
  const cut = space >= max * 0.6 ? head.slice(0, space) : head;
  return `${cut.trimEnd()}…`;
}

/** A title or summary as stored: plain text, capped; undefined when nothing is left. */
export function cleanText(raw: string | undefined, max: number): string | undefined {
  if (raw === undefined) return undefined;
  const text = capText(plainText(raw), max);
  return text === '' ? undefined : text;
}

const TRACKING_PARAMS = new Set([
  'fbclid',
  'gclid',
  'gclsrc',
  'dclid',
  'msclkid',
  'yclid',
  'igshid',
  'twclid',
  'ttclid',
  'li_fat_id',
  'wickedid',
  'ocid',
  'ncid',
  'cmpid',
  'mkt_tok',
  'sr_share',
  'ref_src',
  'ref_url',
  'spm',
  'guccounter',
  'guce_referrer',
  'guce_referrer_sig',
  '_ga',
  '_gl',
  '_hsenc',
  '_hsmi',
  '__s',
  'oly_anon_id',
  'oly_enc_id',
  'vero_id',
  'rb_clickid',
]);

function isTrackingParam(name: string): boolean {
  const key = name.toLowerCase();
  return (
    TRACKING_PARAMS.has(key) ||
    key.startsWith('utm_') ||
    key.startsWith('mc_') ||
    key.startsWith('pk_') ||
    key.startsWith('hsa_') ||
    key.startsWith('itm_')
  );
}

/**
 * The canonical form of an article link, or undefined when it is not one to keep: http(s) only,
 * no credentials; host lower case without a trailing dot; no fragment; tracking parameters
 * removed (the others keep their order); at most URL_MAX characters (a cut link is useless).
 */
export function canonicalUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(plainText(raw).replace(/ /g, '%20'));
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  url.hash = '';
  url.hostname = url.hostname.replace(/\.$/, '');
  // Only a link with tracking parameters is re-serialized (URLSearchParams re-encodes the rest).
  const tracking = [...url.searchParams.keys()].filter(isTrackingParam);
  for (const name of tracking) url.searchParams.delete(name);
  const text = url.toString().replace(/\?$/, '');
  return text.length <= URL_MAX && /^https?:\/\/\S+$/.test(text) ? text : undefined;
}

/** The publisher of a canonical link: its host, lower case, `www.` removed. */
export function sourceOf(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
}

/** The key two headlines are the same story by: letters and digits only, lower case. */
export function titleKey(title: string): string {
  return title
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
