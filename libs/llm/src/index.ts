export * from './llm-client.port';
