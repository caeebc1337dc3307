import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
  type ReactNode,
} from 'react';
import { ApiError } from '../api/api-error';
import type { Principal } from '../api/api-types';
import { checkPrincipal } from './principal';
import { getToken, setToken } from './token-store';

export type Session =
  | { status: 'checking' }
  | { status: 'error'; error: unknown }
  | { status: 'signed-out'; notice?: string }
  | { status: 'signed-in'; principal: Principal; via: 'token' | 'proxy' };

export interface SessionApi {
  session: Session;
  /** Checks the token with GET /me and keeps it; throws the ApiError when it is refused. */
  signIn(token: string): Promise<void>;
  signOut(): void;
  /** A request was refused with 401: the token was revoked or expired. */
  expire(): void;
  retry(): void;
}

const SessionContext = createContext<SessionApi | null>(null);

async function initialSession(): Promise<Session> {
  const stored = getToken();
  if (stored !== null) {
    const check = await checkPrincipal(stored);
    if (check.kind === 'signed-in')
      return { status: 'signed-in', principal: check.principal, via: 'token' };
    setToken(null);
  }
  // No (valid) token: behind IAP the proxy has authenticated the browser already.
  const proxied = await checkPrincipal(null);
  if (proxied.kind === 'signed-in')
    return { status: 'signed-in', principal: proxied.principal, via: 'proxy' };
  return stored === null
    ? { status: 'signed-out' }
    : { status: 'signed-out', notice: 'Your saved token is no longer valid. Sign in again.' };
}

export function SessionProvider({
  children,
  onSignOut,
}: {
  children: ReactNode;
  onSignOut: () => void;
}) {
  const [session, setSession] = useState<Session>({ status: 'checking' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    initialSession().then(
      (next) => live && setSession(next),
      (error: unknown) => live && setSession({ status: 'error', error }),
    );
    return () => {
      live = false;
    };
  }, [attempt]);

  const signIn = useCallback(async (token: string) => {
    const check = await checkPrincipal(token);
    if (check.kind !== 'signed-in') {
      throw new ApiError(401, { code: 'UNAUTHENTICATED', message: 'This token was not accepted.' });
    }
    setToken(token);
    setSession({ status: 'signed-in', principal: check.principal, via: 'token' });
  }, []);

  const signOut = useCallback(() => {
    setToken(null);
    onSignOut();
    setSession({ status: 'signed-out', notice: 'You are signed out.' });
  }, [onSignOut]);

  const expire = useCallback(() => {
    setToken(null);
    onSignOut();
    setSession({
      status: 'signed-out',
      notice: 'Your session ended (the token was revoked or is no longer valid). Sign in again.',
    });
  }, [onSignOut]);

  const retry = useCallback(() => {
    setSession({ status: 'checking' });
    setAttempt((n) => n + 1);
  }, []);

  const value = useMemo(
    () => ({ session, signIn, signOut, expire, retry }),
    [session, signIn, signOut, expire, retry],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const value = useContext(SessionContext);
  if (value === null) throw new Error('useSession outside SessionProvider');
  return value;
}

/** The signed-in principal (the pages behind the sign-in gate only). */
export function usePrincipal(): Principal {
  const { session } = useSession();
  if (session.status !== 'signed-in') throw new Error('usePrincipal while signed out');
  return session.principal;
}
