export * from './identity-store.conformance';
