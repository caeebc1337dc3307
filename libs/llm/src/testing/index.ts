export * from './fake-gemini-server';
export * from './prompt-registry.conformance';
export * from './report-fixtures';
export * from './scripted-llm.client';
export * from './recommendation-fixtures';
export * from './aggregate-fixtures';
