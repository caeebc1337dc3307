import { NavLink, Outlet } from 'react-router';
import { usePrincipal } from '../../auth/session';

const tabClass = ({ isActive }: { isActive: boolean }): string => `tab${isActive ? ' active' : ''}`;

/** The admin pages, for the admin role only; a user who opens one gets a clear refusal. */
export function AdminLayout() {
  const principal = usePrincipal();
  if (principal.role !== 'admin') {
    return (
      <section className="panel forbidden" aria-labelledby="forbidden-title">
        <p className="eyebrow">403 · FORBIDDEN</p>
        <h1 id="forbidden-title">Admins only</h1>
        <p>
          You are signed in as <strong>{principal.ownerId}</strong> with the{' '}
          <strong>{principal.role}</strong> role. The admin pages (reconcile, replay, tokens) need
          the admin role; ask an admin for an admin token.
        </p>
      </section>
    );
  }
  return (
    <section aria-labelledby="admin-title">
      <div className="page-head">
        <div>
          <h1 id="admin-title">Admin</h1>
          <p className="muted">Operator tools. Every action asks before it changes anything.</p>
        </div>
      </div>
      <nav className="tabs" aria-label="Admin">
        <NavLink to="/admin/reconcile" className={tabClass}>
          Reconcile
        </NavLink>
        <NavLink to="/admin/replay" className={tabClass}>
          Replay
        </NavLink>
        <NavLink to="/admin/tokens" className={tabClass}>
          Tokens
        </NavLink>
      </nav>
      <Outlet />
    </section>
  );
}
