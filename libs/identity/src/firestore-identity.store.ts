import {
  type CollectionReference,
  type DocumentData,
  type Firestore,
  GrpcStatus,
} from '@google-cloud/firestore';
import { validate } from '@tda/contracts';
import { firestoreGrpcCode, guardFirestoreCall } from '@tda/flow-store';
import { ApiTokenExistsError, IdentityStoreUnavailableError } from './identity-store.errors';
import {
  byNewestToken,
  DEFAULT_API_TOKENS_COLLECTION,
  DEFAULT_USER_IDENTITIES_COLLECTION,
  IDENTITY_LIST_MAX,
  type ApiTokenRecord,
  type IdentityStore,
  type UserIdentity,
} from './identity-store.port';

export interface FirestoreIdentityStoreOptions {
  tokensCollection?: string;
  identitiesCollection?: string;
}

/** A stored document as the contract says, or null (a foreign or broken document is no principal). */
function tokenOf(data: DocumentData | undefined): ApiTokenRecord | null {
  if (data === undefined) return null;
  const checked = validate.apiToken(data);
  return checked.ok ? checked.value : null;
}

function identityOf(data: DocumentData | undefined): UserIdentity | null {
  if (data === undefined) return null;
  const checked = validate.userIdentity(data);
  return checked.ok ? checked.value : null;
}

/**
 * IdentityStore on Firestore: api_tokens/{sha256 hex of the token} (the lookup on every request
 * is one document get) and user_identities/{email}. Lists use single-field indexes only.
 */
export class FirestoreIdentityStore implements IdentityStore {
  private readonly tokens: CollectionReference;
  private readonly identities: CollectionReference;

  constructor(firestore: Firestore, options: FirestoreIdentityStoreOptions = {}) {
    this.tokens = firestore.collection(options.tokensCollection ?? DEFAULT_API_TOKENS_COLLECTION);
    this.identities = firestore.collection(
      options.identitiesCollection ?? DEFAULT_USER_IDENTITIES_COLLECTION,
    );
  }

  createToken(hash: string, record: ApiTokenRecord): Promise<void> {
    return this.guarded('createToken', async () => {
      try {
        await this.tokens.doc(hash).create({ ...record });
      } catch (error) {
        if (firestoreGrpcCode(error) === GrpcStatus.ALREADY_EXISTS) {
          throw new ApiTokenExistsError(record.tokenId);
        }
        throw error;
      }
    });
  }

  findTokenByHash(hash: string): Promise<ApiTokenRecord | null> {
    return this.guarded('findTokenByHash', async () => {
      if (!/^[0-9a-f]{64}$/.test(hash)) return null;
      return tokenOf((await this.tokens.doc(hash).get()).data());
    });
  }

  listTokens(filter: { ownerId?: string } = {}): Promise<ApiTokenRecord[]> {
    return this.guarded('listTokens', async () => {
      const query =
        filter.ownerId === undefined
          ? this.tokens
          : this.tokens.where('ownerId', '==', filter.ownerId);
      const snapshot = await query.limit(IDENTITY_LIST_MAX).get();
      return snapshot.docs
        .map((doc) => tokenOf(doc.data()))
        .filter((t): t is ApiTokenRecord => t !== null)
        .sort(byNewestToken);
    });
  }

  revokeToken(tokenId: string, at: string): Promise<ApiTokenRecord | null> {
    return this.guarded('revokeToken', async () => {
      const found = await this.tokens.where('tokenId', '==', tokenId).limit(1).get();
      const doc = found.docs[0];
      const record = tokenOf(doc?.data());
      if (doc === undefined || record === null) return null;
      if (record.revokedAt !== undefined) return record;
      // Precondition: a concurrent revoke keeps its (first) time; this one then re-reads it.
      try {
        await doc.ref.update({ revokedAt: at }, { lastUpdateTime: doc.updateTime });
        return { ...record, revokedAt: at };
      } catch (error) {
        if (firestoreGrpcCode(error) !== GrpcStatus.FAILED_PRECONDITION) throw error;
        return tokenOf((await doc.ref.get()).data());
      }
    });
  }

  touchToken(hash: string, at: string): Promise<void> {
    return this.guarded('touchToken', async () => {
      try {
        await this.tokens.doc(hash).update({ lastUsedAt: at });
      } catch (error) {
        if (firestoreGrpcCode(error) !== GrpcStatus.NOT_FOUND) throw error;
      }
    });
  }

  putUserIdentity(identity: UserIdentity): Promise<void> {
    return this.guarded('putUserIdentity', async () => {
      await this.identities.doc(identity.email).set({ ...identity });
    });
  }

  getUserIdentity(email: string): Promise<UserIdentity | null> {
    return this.guarded('getUserIdentity', async () => {
      if (email === '' || email.includes('/') || email.length > 320) return null;
      return identityOf((await this.identities.doc(email).get()).data());
    });
  }

  listUserIdentities(): Promise<UserIdentity[]> {
    return this.guarded('listUserIdentities', async () => {
      const snapshot = await this.identities.limit(IDENTITY_LIST_MAX).get();
      return snapshot.docs
        .map((doc) => identityOf(doc.data()))
        .filter((i): i is UserIdentity => i !== null)
        .sort((a, b) => (a.email < b.email ? -1 : 1));
    });
  }

  deleteUserIdentity(email: string): Promise<boolean> {
    return this.guarded('deleteUserIdentity', async () => {
      if (email === '' || email.includes('/') || email.length > 320) return false;
      const ref = this.identities.doc(email);
      const snapshot = await ref.get();
      if (!snapshot.exists) return false;
      await ref.delete();
      return true;
    });
  }

  private guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return guardFirestoreCall(
      call,
      (status, cause) => new IdentityStoreUnavailableError(operation, status, cause),
    );
  }
}
