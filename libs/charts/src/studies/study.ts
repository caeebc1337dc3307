import type { SeriesOption } from 'echarts';

/** One indicator family drawn into one pane: its series, legend entries and factual fragments. */
export interface StudyResult {
  series: SeriesOption[];
  legend: string[];
  /** Short clauses of the chart description, in reading order. */
  facts: string[];
  /**
   * 'RSI(14) needs 15 bars, 9 available' for each study the history cannot compute: drawn in the
   * pane (an empty pane must say why) and kept in the description whatever its length.
   */
  notes: string[];
}

export interface PaneAxes {
  xAxisIndex: number;
  yAxisIndex: number;
}

/** ECharts' marker for "no value here" (a gap in the line). */
export const NO_VALUE = '-';

export function toChartValues(values: readonly (number | null)[]): (number | string)[] {
  return values.map((value) => (value === null ? NO_VALUE : value));
}
