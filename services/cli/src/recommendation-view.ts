import { validate, type LlmRecommendationFile } from '@tda/contracts';

/** A report the recommendation rests on: its id and the one line a terminal shows. */
export interface CitedReport {
  reportId: string;
  timeframe?: string;
  headline: string;
}

/** Model text for a terminal: no control characters (escape sequences), at most `max` chars. */
export function terminalText(text: string, max = 160): string {
  const plain = [...text]
    .map((c) => (c === '\n' || c === '\t' ? ' ' : c))
    .filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f)
    .join('')
    .trim();
  return plain.length > max ? `${plain.slice(0, max - 3)}...` : plain;
}

function price(value: number): string {
  const digits = value >= 1000 ? 0 : value >= 1 ? 2 : 6;
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

/** The trade lines of a non-HOLD recommendation (absent fields are left out). */
function levelLines(output: LlmRecommendationFile['output']): string[] {
  const lines: string[] = [];
  if (output.entry !== undefined) {
    lines.push(`entry       ${price(output.entry.low)} - ${price(output.entry.high)}`);
  }
  if (output.stopLoss !== undefined) lines.push(`stop        ${price(output.stopLoss)}`);
  if (output.takeProfit !== undefined && output.takeProfit.length > 0) {
    lines.push(`targets     ${output.takeProfit.map(price).join(', ')}`);
  }
  if (output.size !== undefined) {
    lines.push(`size        ${percent(output.size.fractionOfEquity)} of equity`);
  }
  return lines;
}

/**
 * A recommendation for a terminal: action and strength first, the levels, the moment it
 * describes and who produced it, then the reports it rests on (their headlines) and the risks.
 */
export function renderRecommendation(
  file: LlmRecommendationFile,
  reports: readonly CitedReport[] = [],
): string {
  const { metadata, output } = file;
  const producer =
    metadata.provider === 'offline'
      ? 'offline recommender (deterministic, no model)'
      : `${metadata.provider} ${metadata.modelName}`;
  const lines = [
    `${output.action} ${metadata.symbol}  strength ${output.signal_strength.toFixed(2)}  — ${terminalText(output.headline)}`,
    `as of       ${metadata.asOf} (last close ${price(metadata.lastClose)})`,
    ...levelLines(output),
    `horizon     ${terminalText(output.horizon.label, 80)} (${output.horizon.days} days)`,
    `by          ${producer}`,
  ];
  if (metadata.inputs.accountId !== undefined)
    lines.push(`account     ${metadata.inputs.accountId}`);
  if (reports.length > 0) {
    lines.push('rests on');
    for (const report of reports) {
      const tf = report.timeframe === undefined ? '' : `${report.timeframe} `;
      lines.push(`  ${report.reportId}  ${tf}${terminalText(report.headline, 110)}`);
    }
  }
  lines.push('risks');
  for (const risk of output.risks) lines.push(`  - ${terminalText(risk, 150)}`);
  return lines.join('\n');
}

/** The first non-empty Markdown line of a report, without heading marks. */
export function reportHeadline(markdown: string): string {
  const line = markdown
    .split('\n')
    .map((l) => l.replace(/^#+\s*/, '').trim())
    .find((l) => l.length > 0);
  return line ?? '(empty report)';
}

/** Parses a recommendation artifact; undefined when it is not one (caller reports it). */
export function parseRecommendationFile(data: unknown): LlmRecommendationFile | undefined {
  const checked = validate.llmRecommendationFile(data);
  return checked.ok ? checked.value : undefined;
}
