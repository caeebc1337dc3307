import { useState, type FormEvent } from 'react';
import { useSession } from './session';
import { ErrorPanel } from '../ui/error-panel';

/** The sign-in page: an API token, and how to get one. */
export function SignInPage({ notice }: { notice?: string }) {
  const { signIn } = useSession();
  const [token, setToken] = useState('');
  const [show, setShow] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const value = token.trim();
    if (value === '') {
      setProblem('Paste your API token');
      return;
    }
    setProblem(undefined);
    setError(undefined);
    setBusy(true);
    signIn(value).then(
      () => setBusy(false),
      (e: unknown) => {
        setBusy(false);
        setError(e);
      },
    );
  };

  return (
    <main id="main" className="sign-in">
      <div className="sign-in-card">
        <p className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>
          TDA
        </p>
        <h1>Sign in to the console</h1>
        <p className="muted">Runs, their steps and results, live.</p>
        {notice !== undefined && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        <form onSubmit={submit} noValidate>
          <div className="field">
            <label className="field-label" htmlFor="token">
              API token
            </label>
            <div className="input-row">
              <input
                id="token"
                name="token"
                type={show ? 'text' : 'password'}
                autoComplete="off"
                spellCheck={false}
                placeholder="tda_…"
                value={token}
                onChange={(e) => setToken(e.target.value)}
                aria-invalid={problem !== undefined}
                aria-describedby={problem === undefined ? 'token-hint' : 'token-hint token-error'}
                autoFocus
              />
              <button
                type="button"
                className="btn btn-ghost"
                onClick={() => setShow((s) => !s)}
                aria-pressed={show}
              >
                {show ? 'Hide' : 'Show'}
              </button>
            </div>
            <span id="token-hint" className="field-hint">
              Kept in this browser until you sign out.
            </span>
            {problem !== undefined && (
              <span id="token-error" className="field-error">
                {problem}
              </span>
            )}
          </div>
          {error !== undefined && <ErrorPanel error={error} title="Sign-in failed" />}
          <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in'}
          </button>
        </form>
        <div className="how-to">
          <h2>Where do I get a token?</h2>
          <ul>
            <li>
              Running locally: <code>npm start</code> prints an admin token and this console’s
              address.
            </li>
            <li>
              An admin creates one for you:{' '}
              <code>npx tda tokens create --owner &lt;owner&gt; --role user</code> (shown once).
            </li>
            <li>Behind Google’s Identity-Aware Proxy you are signed in automatically.</li>
          </ul>
        </div>
      </div>
    </main>
  );
}
