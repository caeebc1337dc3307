export * from './principal';
export * from './api-token';
export * from './identity-store.port';
export * from './identity-store.errors';
export * from './in-memory-identity.store';
export * from './firestore-identity.store';
