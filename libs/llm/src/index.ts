export * from './llm-client.port';
export * from './gemini';
