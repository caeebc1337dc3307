import { describe, expect, it } from 'vitest';
import { hashApiToken, isApiTokenFormat, isTokenId, issueApiToken } from './api-token';
import { InMemoryIdentityStore } from './in-memory-identity.store';
import { describeIdentityStoreConformance } from './testing';

describeIdentityStoreConformance('in-memory', async () => ({
  store: new InMemoryIdentityStore(),
  cleanup: async () => undefined,
}));

describe('issueApiToken', () => {
  it('issues tda_ + 256 random bits; the id is a prefix of the hash, never of the token', () => {
    const issued = issueApiToken(() => Buffer.alloc(32, 7));
    expect(isApiTokenFormat(issued.token)).toBe(true);
    expect(issued.hash).toBe(hashApiToken(issued.token));
    expect(issued.tokenId).toBe(`tok_${issued.hash.slice(0, 16)}`);
    expect(isTokenId(issued.tokenId)).toBe(true);
    expect(issued.token).not.toContain(issued.hash.slice(0, 16));
    expect(issueApiToken().token).not.toBe(issueApiToken().token);
  });
});
