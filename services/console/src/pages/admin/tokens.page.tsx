import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { ApiToken, ApiTokenRequest, CreatedToken, Role } from '../../api/api-types';
import { api, unwrap } from '../../api/client';
import { queryKeys } from '../../api/queries';
import { ConfirmDialog } from '../../ui/confirm-dialog';
import { CopyButton } from '../../ui/copy-button';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { RelativeTime, useNow } from '../../ui/time';

function CreateToken({ onCreated }: { onCreated: (token: CreatedToken) => void }) {
  const queryClient = useQueryClient();
  const [ownerId, setOwnerId] = useState('');
  const [role, setRole] = useState<Role>('user');
  const [name, setName] = useState('');
  const [days, setDays] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const create = useMutation({
    mutationFn: (body: ApiTokenRequest) => unwrap(api.POST('/admin/tokens', { body })),
    onSuccess: (token) => {
      onCreated(token);
      setName('');
      void queryClient.invalidateQueries({ queryKey: queryKeys.tokens });
    },
  });
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    if (ownerId.trim() === '' || name.trim() === '') {
      setProblem('Owner and name are required');
      return;
    }
    const expiresInDays = days.trim() === '' ? undefined : Number(days);
    if (expiresInDays !== undefined && !(Number.isInteger(expiresInDays) && expiresInDays > 0)) {
      setProblem('Expiry is a whole number of days (or empty: no expiry)');
      return;
    }
    setProblem(undefined);
    const body: ApiTokenRequest = { ownerId: ownerId.trim(), role, name: name.trim() };
    if (expiresInDays !== undefined) body.expiresInDays = expiresInDays;
    create.mutate(body);
  };
  return (
    <form
      className="panel token-form"
      onSubmit={submit}
      noValidate
      aria-labelledby="create-token-title"
    >
      <h2 id="create-token-title" className="panel-title">
        Create a token
      </h2>
      <div className="form-row">
        <div className="field">
          <label className="field-label" htmlFor="token-owner">
            Owner{' '}
            <span className="required" aria-hidden="true">
              *
            </span>
          </label>
          <input
            id="token-owner"
            value={ownerId}
            onChange={(e) => setOwnerId(e.target.value)}
            spellCheck={false}
          />
        </div>
        <div className="field">
          <label className="field-label" htmlFor="token-role">
            Role
          </label>
          <select id="token-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            <option value="user">user</option>
            <option value="admin">admin</option>
          </select>
        </div>
        <div className="field">
          <label className="field-label" htmlFor="token-name">
            Name{' '}
            <span className="required" aria-hidden="true">
              *
            </span>
          </label>
          <input
            id="token-name"
            value={name}
            placeholder="e.g. alice laptop"
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div className="field">
          <label className="field-label" htmlFor="token-days">
            Expires in (days)
          </label>
          <input
            id="token-days"
            type="number"
            min={1}
            value={days}
            placeholder="never"
            onChange={(e) => setDays(e.target.value)}
          />
        </div>
        <div className="form-actions">
          <button type="submit" className="btn btn-primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create token'}
          </button>
        </div>
      </div>
      {problem !== undefined && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      {create.isError && <ErrorPanel error={create.error} title="The token was not created" />}
    </form>
  );
}

function NewTokenNotice({ token, onDone }: { token: CreatedToken; onDone: () => void }) {
  return (
    <div className="notice notice-success" role="status">
      <strong>
        Token for {token.ownerId} ({token.role}) created. Copy it now: it is shown only once.
      </strong>
      <div className="secret-row">
        <code className="secret mono">{token.token}</code>
        <CopyButton text={token.token} label="Copy token" />
      </div>
      <button type="button" className="btn btn-small" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

function TokenState({ token, now }: { token: ApiToken; now: number }) {
  if (token.revokedAt !== undefined) return <span className="chip">revoked</span>;
  if (token.expiresAt !== undefined && Date.parse(token.expiresAt) <= now)
    return <span className="chip">expired</span>;
  return (
    <span
      className="chip chip-success"
      title={token.expiresAt === undefined ? 'never expires' : `expires ${token.expiresAt}`}
    >
      active
    </span>
  );
}

function TokenRows({
  tokens,
  now,
  onRevoke,
}: {
  tokens: ApiToken[];
  now: number;
  onRevoke: (t: ApiToken) => void;
}) {
  return (
    <div className="table-wrap">
      <table className="data-table">
        <caption className="visually-hidden">API tokens</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Owner</th>
            <th scope="col">Role</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((t) => (
            <tr key={t.tokenId}>
              <td>
                {t.name}
                <div className="muted small mono">{t.tokenId}</div>
              </td>
              <td>{t.ownerId}</td>
              <td>
                <span className={`role role-${t.role}`}>{t.role}</span>
              </td>
              <td>
                <RelativeTime iso={t.createdAt} now={now} />
                <div className="muted small">by {t.createdBy}</div>
              </td>
              <td>
                <RelativeTime iso={t.lastUsedAt} now={now} />
              </td>
              <td>
                <TokenState token={t} now={now} />
              </td>
              <td>
                {t.revokedAt === undefined && (
                  <button
                    type="button"
                    className="btn btn-small btn-danger-outline"
                    onClick={() => onRevoke(t)}
                    aria-label={`Revoke token ${t.name}`}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** API tokens: list, create (shown once), revoke. */
export function TokensPage() {
  const queryClient = useQueryClient();
  const now = useNow(30_000);
  const [created, setCreated] = useState<CreatedToken | undefined>(undefined);
  const [revoking, setRevoking] = useState<ApiToken | undefined>(undefined);
  const tokens = useQuery({
    queryKey: queryKeys.tokens,
    queryFn: async () => (await unwrap(api.GET('/admin/tokens'))).tokens,
  });
  const revoke = useMutation({
    mutationFn: (tokenId: string) =>
      unwrap(api.DELETE('/admin/tokens/{tokenId}', { params: { path: { tokenId } } })),
    onSuccess: () => {
      setRevoking(undefined);
      void queryClient.invalidateQueries({ queryKey: queryKeys.tokens });
    },
  });
  return (
    <div className="admin-page">
      {created !== undefined && (
        <NewTokenNotice token={created} onDone={() => setCreated(undefined)} />
      )}
      <CreateToken onCreated={setCreated} />
      {tokens.isPending && <SkeletonBlock lines={4} label="Loading tokens" />}
      {tokens.isError && (
        <ErrorPanel
          error={tokens.error}
          title="The tokens could not be loaded"
          onRetry={() => void tokens.refetch()}
        />
      )}
      {tokens.data !== undefined && tokens.data.length === 0 && (
        <EmptyState title="No tokens yet" />
      )}
      {tokens.data !== undefined && tokens.data.length > 0 && (
        <TokenRows
          tokens={tokens.data}
          now={now}
          onRevoke={(t) => (revoke.reset(), setRevoking(t))}
        />
      )}
      <ConfirmDialog
        open={revoking !== undefined}
        title="Revoke this token?"
        confirmLabel="Revoke"
        danger
        busy={revoke.isPending}
        onCancel={() => setRevoking(undefined)}
        onConfirm={() => revoking !== undefined && revoke.mutate(revoking.tokenId)}
      >
        <p>
          <strong>{revoking?.name}</strong> ({revoking?.ownerId}, {revoking?.role}) stops working at
          once. This cannot be undone.
        </p>
        {revoke.isError && <ErrorPanel error={revoke.error} title="Not revoked" />}
      </ConfirmDialog>
    </div>
  );
}
