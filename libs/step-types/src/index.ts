export * from './step-type.descriptor';
export * from './ohlcv-export.step-type';
export * from './chart-export.step-type';
export * from './llm-report.step-type';
export * from './step-types.registry';
export * from './step-types.docs';
