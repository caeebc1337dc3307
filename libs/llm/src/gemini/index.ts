export * from './gemini-llm.client';
export * from './gemini-error.mapper';
export * from './gemini-request.mapper';
export * from './gemini-response.mapper';
export * from './llm-env';
