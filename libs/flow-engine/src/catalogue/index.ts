export * from './flow-definition';
export * from './flow-catalogue';
export * from './scope';
export * from './report-steps';
export * from './scheduled-month-week-report.flow';
export * from './user-multi-tf-report.flow';
export * from './market-charts.flow';
