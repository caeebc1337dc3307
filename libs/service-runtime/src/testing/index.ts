export * from './oidc-test.issuer';
