import type { MarketAnalysis, PriceLevel, TrendDirection } from './offline-analysis';
import {
  formatOpenTime,
  formatPrice,
  HORIZONS,
  levelRationale,
  levelText,
  round,
  roundPrice,
  TIMEFRAME_NAMES,
} from './offline-report-format';
import {
  indicators,
  indicatorsText,
  trendRationale,
  type Indicator,
} from './offline-report-indicators';
import {
  priceFrame,
  reportBias,
  reportOutlook,
  reportRisks,
  type HigherTimeframeRead,
  type Outlook,
  type ReportContext,
} from './offline-report-outlook';

export { formatOpenTime, formatPrice, roundPrice } from './offline-report-format';

/**
 * Turns a MarketAnalysis into an llm_report_output_v1 object (summary.markdown + details) with
 * fixed wording: the offline analyst's report. Every number is formatted by code (no locale
 * APIs, see offline-report-format.ts), so the text is byte-identical on every machine.
 */

export const OFFLINE_ANALYST_LABEL = 'Offline analyst (deterministic, no LLM)';

/** A previous report of the same run as the analyst reads it (from its llm_report_file). */
export interface HigherTimeframeView {
  timeframe: string;
  direction?: string;
  bias?: string;
}

export interface OfflineReportInput {
  symbol: string;
  timeframe: string;
  analysis: MarketAnalysis;
  /** Chart template ids/kinds from the charts manifest, in manifest order. */
  charts: readonly { chartTemplateId: string; kind?: string }[];
  higherTimeframes: readonly HigherTimeframeView[];
}

/** The sections the summary markdown retells, computed once for details too. */
interface ReportSections {
  trendText: string;
  htfSentence: string | undefined;
  indicators: readonly Indicator[];
  risks: readonly string[];
  outlook: Outlook;
}

/** Higher-timeframe context from previous reports of this run: the first that reads a trend. */
function higherTimeframeRead(
  views: readonly HigherTimeframeView[],
  direction: TrendDirection,
  name: string,
): HigherTimeframeRead | undefined {
  const htf = views.find((v) => v.direction !== undefined || v.bias !== undefined);
  if (htf === undefined) return undefined;
  const htfDirection = htf.direction ?? (htf.bias === 'neutral' ? 'sideways' : htf.bias);
  const agrees = htfDirection === direction;
  const htfName = TIMEFRAME_NAMES[htf.timeframe] ?? htf.timeframe;
  const sentence = `The ${htfName} (${htf.timeframe}) report of this run reads the trend as ${htfDirection ?? 'unknown'}${
    htf.bias === undefined ? '' : ` with a ${htf.bias} bias`
  }; the ${name} structure (${direction}) ${agrees ? 'confirms it' : direction === 'sideways' ? 'does not confirm it yet' : 'contradicts it: treat the move as counter-trend until the higher timeframe turns'}.`;
  return { timeframe: htf.timeframe, agrees, sentence };
}

/** Rule-based, so never high: a stronger trend adds, a short history or a disagreeing HTF takes. */
function reportConfidence(a: MarketAnalysis, htfAgrees: boolean | undefined): number {
  let confidence = 0.35 + 0.05 * Math.abs(a.trend.score);
  if (a.candleCount < 30) confidence -= 0.1;
  if (htfAgrees === true) confidence += 0.05;
  if (htfAgrees === false) confidence -= 0.05;
  return round(Math.min(0.6, Math.max(0.1, confidence)), 2);
}

/** details.keyLevels.support / .resistance entries. */
function keyLevels(
  levels: readonly PriceLevel[],
  timeframe: string,
): { price: number; strength: PriceLevel['strength']; rationale: string }[] {
  return levels.map((l) => ({
    price: roundPrice(l.price),
    strength: l.strength,
    rationale: levelRationale(l, timeframe),
  }));
}

/** summary.markdown: the same reading as details, as prose for a person. */
function reportMarkdown(
  input: OfflineReportInput,
  ctx: ReportContext,
  sections: ReportSections,
): string {
  const { a, timeframe, name } = ctx;
  const { outlook } = sections;
  const direction = a.trend.direction;
  const md: string[] = [
    `## ${input.symbol} ${name} (${timeframe}): ${direction === 'sideways' ? 'sideways' : `${direction} trend`}, ${a.trend.strength}`,
    '',
    `_${OFFLINE_ANALYST_LABEL}: computed from the OHLCV data of this run with fixed rules; the chart images were not read._`,
    '',
    `The last complete candle (${formatOpenTime(a.last.openTime, timeframe)}) closed at **${formatPrice(a.last.close)}**. The period runs from ${formatOpenTime(a.first.openTime, timeframe)}, with a high of ${formatPrice(a.periodHigh.price)} (${formatOpenTime(a.periodHigh.openTime, timeframe)}) and a low of ${formatPrice(a.periodLow.price)} (${formatOpenTime(a.periodLow.openTime, timeframe)}). ${sections.trendText}`,
  ];
  if (a.forming !== undefined) {
    md.push(
      '',
      `The current candle (opened ${formatOpenTime(a.forming.openTime, timeframe)}) is still forming at ${formatPrice(a.forming.close)}; it is not treated as confirmed.`,
    );
  }
  if (sections.htfSentence !== undefined)
    md.push('', `**Higher timeframe.** ${sections.htfSentence}`);
  md.push(
    '',
    `**Key levels.** Support: ${a.supports.length === 0 ? 'none below the close in this history' : a.supports.map((l) => levelText(l, timeframe)).join('; ')}. Resistance: ${
      a.resistances.length === 0
        ? 'none above the close in this history (price is at the top of its range)'
        : a.resistances.map((l) => levelText(l, timeframe)).join('; ')
    }.`,
    '',
    `**Indicators.** ${indicatorsText(sections.indicators, a.shortfalls)}${
      a.returnsStdevPct === null
        ? ''
        : ` Close-to-close volatility is ${a.returnsStdevPct.toFixed(1)}% per candle.`
    }`,
    '',
    '**Risks.**',
    ...sections.risks.map((r) => `- ${r}`),
    '',
    `**Outlook (${ctx.horizon}, bias ${outlook.bias}).** ${outlook.baseCase} Bull case: ${outlook.bullCase} Bear case: ${outlook.bearCase} Invalidation: ${outlook.invalidation}`,
  );
  if (input.charts.length > 0) {
    md.push(
      '',
      `Charts in this run: ${input.charts.map((c) => (c.kind === undefined ? c.chartTemplateId : `${c.chartTemplateId} (${c.kind})`)).join(', ')}.`,
    );
  }
  md.push('', 'This is rule-based analysis, not financial advice.');
  return md.join('\n');
}

export function buildOfflineReport(input: OfflineReportInput): {
  summary: { markdown: string };
  details: Record<string, unknown>;
} {
  const { analysis: a, timeframe } = input;
  const name = TIMEFRAME_NAMES[timeframe] ?? timeframe;
  const ctx: ReportContext = {
    a,
    timeframe,
    name,
    horizon: HORIZONS[timeframe] ?? 'next few bars',
  };
  const htf = higherTimeframeRead(input.higherTimeframes, a.trend.direction, name);
  const frame = priceFrame(a);
  const bias = reportBias(a);
  const risks = reportRisks(ctx, frame.floor, bias, htf);
  const outlook = reportOutlook(ctx, frame, bias);
  const indicatorList = indicators(a);
  const trendText = trendRationale(a, name);
  const details = {
    trend: { direction: a.trend.direction, strength: a.trend.strength, rationale: trendText },
    keyLevels: {
      support: keyLevels(a.supports, timeframe),
      resistance: keyLevels(a.resistances, timeframe),
    },
    indicators: indicatorList,
    risks,
    outlook,
    confidence: reportConfidence(a, htf?.agrees),
  };
  const markdown = reportMarkdown(input, ctx, {
    trendText,
    htfSentence: htf?.sentence,
    indicators: indicatorList,
    risks,
    outlook,
  });
  return { summary: { markdown }, details };
}
