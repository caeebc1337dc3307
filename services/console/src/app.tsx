import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, Suspense, useCallback, useEffect, useState, type ReactNode } from 'react';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { toApiError } from './api/api-error';
import { SessionProvider, useSession } from './auth/session';
import { SignInPage } from './auth/sign-in.page';
import { AdminLayout } from './pages/admin/admin-layout';
import { NotFoundPage } from './pages/not-found.page';
import { RunsListPage } from './pages/runs/runs-list.page';
import { ErrorPanel } from './ui/error-panel';
import { Layout } from './ui/layout';
import { SkeletonBlock } from './ui/skeleton';

// Loaded on first visit: the run page carries the graph, the markdown renderer and the previews.
const RunPage = lazy(() => import('./pages/run/run.page').then((m) => ({ default: m.RunPage })));
const TriggerPage = lazy(() =>
  import('./pages/trigger/trigger.page').then((m) => ({ default: m.TriggerPage })),
);
const SchedulesPage = lazy(() =>
  import('./pages/schedules/schedules.page').then((m) => ({ default: m.SchedulesPage })),
);
const SchedulePage = lazy(() =>
  import('./pages/schedules/schedule.page').then((m) => ({ default: m.SchedulePage })),
);
const BacktestsPage = lazy(() =>
  import('./pages/backtests/backtests.page').then((m) => ({ default: m.BacktestsPage })),
);
const BacktestJobPage = lazy(() =>
  import('./pages/backtests/backtest-job.page').then((m) => ({ default: m.BacktestJobPage })),
);
const SignalsPage = lazy(() =>
  import('./pages/signals/signals.page').then((m) => ({ default: m.SignalsPage })),
);
const ReconcilePage = lazy(() =>
  import('./pages/admin/reconcile.page').then((m) => ({ default: m.ReconcilePage })),
);
const ReplayPage = lazy(() =>
  import('./pages/admin/replay.page').then((m) => ({ default: m.ReplayPage })),
);
const TokensPage = lazy(() =>
  import('./pages/admin/tokens.page').then((m) => ({ default: m.TokensPage })),
);

function Page({ children }: { children: ReactNode }) {
  return (
    <Suspense fallback={<SkeletonBlock lines={6} label="Loading the page" />}>{children}</Suspense>
  );
}

/** Client errors do not get better by asking again; outages and network drops may. */
function shouldRetry(failures: number, error: unknown): boolean {
  const status = toApiError(error).status;
  return failures < 2 && (status === 0 || status >= 500 || status === 429);
}

function Routed() {
  const { session, retry } = useSession();
  if (session.status === 'checking') {
    return (
      <main id="main" className="sign-in">
        <SkeletonBlock lines={3} label="Checking your session" />
      </main>
    );
  }
  if (session.status === 'error') {
    return (
      <main id="main" className="sign-in">
        <ErrorPanel
          error={session.error}
          title="The orchestrator cannot be reached"
          onRetry={retry}
        />
      </main>
    );
  }
  if (session.status === 'signed-out')
    return <SignInPage {...(session.notice === undefined ? {} : { notice: session.notice })} />;
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route index element={<RunsListPage />} />
        <Route
          path="runs/:runId"
          element={
            <Page>
              <RunPage />
            </Page>
          }
        />
        <Route
          path="trigger"
          element={
            <Page>
              <TriggerPage />
            </Page>
          }
        />
        <Route
          path="schedules"
          element={
            <Page>
              <SchedulesPage />
            </Page>
          }
        />
        <Route
          path="schedules/:scheduleId"
          element={
            <Page>
              <SchedulePage />
            </Page>
          }
        />
        <Route
          path="signals"
          element={
            <Page>
              <SignalsPage />
            </Page>
          }
        />
        <Route
          path="backtests"
          element={
            <Page>
              <BacktestsPage />
            </Page>
          }
        />
        <Route
          path="backtests/:jobId"
          element={
            <Page>
              <BacktestJobPage />
            </Page>
          }
        />
        <Route path="admin" element={<AdminLayout />}>
          <Route index element={<Navigate to="/admin/reconcile" replace />} />
          <Route
            path="reconcile"
            element={
              <Page>
                <ReconcilePage />
              </Page>
            }
          />
          <Route
            path="replay"
            element={
              <Page>
                <ReplayPage />
              </Page>
            }
          />
          <Route
            path="tokens"
            element={
              <Page>
                <TokensPage />
              </Page>
            }
          />
        </Route>
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}

/** Lets the query layer end the session on a 401 (a revoked token) from any request. */
function ExpireOnUnauthorized({ register }: { register: (expire: () => void) => void }) {
  const { expire } = useSession();
  useEffect(() => register(expire), [register, expire]);
  return null;
}

/** Where a 401 from any query or mutation goes: the session's expire (set once it exists). */
const unauthorized = { handler: (): void => undefined };

function registerUnauthorized(expire: () => void): void {
  unauthorized.handler = expire;
}

function createQueryClient(): QueryClient {
  const onError = (error: unknown): void => {
    if (toApiError(error).status === 401) unauthorized.handler();
  };
  return new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: { retry: shouldRetry, staleTime: 2_000, refetchOnWindowFocus: true },
    },
  });
}

export function App() {
  const [queryClient] = useState(createQueryClient);
  const clear = useCallback(() => queryClient.clear(), [queryClient]);
  return (
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <SessionProvider onSignOut={clear}>
          <ExpireOnUnauthorized register={registerUnauthorized} />
          <Routed />
        </SessionProvider>
      </BrowserRouter>
    </QueryClientProvider>
  );
}
