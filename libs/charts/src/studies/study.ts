import type { SeriesOption } from 'echarts';

/** One indicator family drawn into one pane: its series, legend entries and factual fragments. */
export interface StudyResult {
  series: SeriesOption[];
  legend: string[];
  /** Short clauses of the chart description, in reading order. */
  facts: string[];
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
