/** Where the signed-in API token lives between visits (the spec's key). */
export const TOKEN_STORAGE_KEY = 'tda.token';

/**
 * The API token of this browser: kept in localStorage so a reload stays signed in, and in memory
 * so a browser that refuses storage (private mode) still works for the session.
 */
let current: string | null = readStored();

function readStored(): string | null {
  try {
    return globalThis.localStorage?.getItem(TOKEN_STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

export function getToken(): string | null {
  return current;
}

export function setToken(token: string | null): void {
  current = token;
  try {
    if (token === null) globalThis.localStorage?.removeItem(TOKEN_STORAGE_KEY);
    else globalThis.localStorage?.setItem(TOKEN_STORAGE_KEY, token);
  } catch {
    // storage refused: the in-memory copy still serves this tab
  }
}
