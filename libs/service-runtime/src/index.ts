export * from './service-main';
export * from './health.server';
export * from './id-token.verifier';
export * from './google-account.verifiers';
export * from './http-drain';
