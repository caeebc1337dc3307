export * from './account.fixtures';
export * from './account-store.conformance';
export * from './recorded-account-exchange';
