export * from './config';
export * from './llm-recommendation-file';
export * from './llm-recommendation.handler';
export * from './llm-recommendation.factory';
export * from './llm-recommendation.worker';
