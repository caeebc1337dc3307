export * from './fake-gemini-server';
