import { useState } from 'react';
import { Link, NavLink, Outlet } from 'react-router';
import { usePrincipal, useSession } from '../auth/session';
import { applyTheme, initialTheme, saveTheme, type Theme } from './theme';

function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(() => initialTheme());
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      className="btn btn-ghost btn-icon"
      aria-label={`Switch to ${next} theme`}
      title={`Switch to ${next} theme`}
      onClick={() => {
        applyTheme(next);
        saveTheme(next);
        setTheme(next);
      }}
    >
      <span aria-hidden="true">{theme === 'dark' ? '☀' : '☾'}</span>
    </button>
  );
}

const navClass = ({ isActive }: { isActive: boolean }): string =>
  `nav-link${isActive ? ' active' : ''}`;

/** The frame of every signed-in page: brand, navigation, who is signed in, theme, sign out. */
export function Layout() {
  const principal = usePrincipal();
  const { session, signOut } = useSession();
  const viaProxy = session.status === 'signed-in' && session.via === 'proxy';
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <div className="header-inner">
          <Link to="/" className="brand" aria-label="TDA console home">
            <span className="brand-mark" aria-hidden="true">
              ◆
            </span>
            TDA
          </Link>
          <nav aria-label="Main" className="main-nav">
            <NavLink to="/" end className={navClass}>
              Runs
            </NavLink>
            <NavLink to="/trigger" className={navClass}>
              Trigger
            </NavLink>
            <NavLink to="/schedules" className={navClass}>
              Schedules
            </NavLink>
            <NavLink to="/signals" className={navClass}>
              Signals
            </NavLink>
            <NavLink to="/backtests" className={navClass}>
              Backtests
            </NavLink>
            {principal.role === 'admin' && (
              <NavLink to="/admin" className={navClass}>
                Admin
              </NavLink>
            )}
          </nav>
          <div className="header-right">
            <span
              className="principal"
              title={`Signed in as ${principal.subject} (${principal.method})`}
            >
              <span className="principal-owner">{principal.ownerId}</span>
              <span className={`role role-${principal.role}`}>{principal.role}</span>
            </span>
            <ThemeToggle />
            {!viaProxy && (
              <button type="button" className="btn btn-small" onClick={signOut}>
                Sign out
              </button>
            )}
          </div>
        </div>
      </header>
      <main id="main" className="page" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
