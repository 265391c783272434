// The console's routes: /login, and everything else behind the session guard, where the console
// (views/ConsoleRoutes.tsx) is loaded on demand: signed-out visitors go to /login, which loads
// without it, and come back to where they were. Hash routing, because the server serves only
// index.html's own path; the declarative router, since no route loads data (half the size of the
// data router in the first download).
import { lazy, Suspense } from "react";
import { HashRouter, Route, Routes } from "react-router-dom";
import { RequireSession } from "./components/RequireSession.js";
import { Login } from "./views/Login.js";

const ConsoleRoutes = lazy(() => import("./views/ConsoleRoutes.js").then((m) => ({ default: m.ConsoleRoutes })));

export function App() {
  return (
    <HashRouter>
      <Routes>
        <Route path="/login" element={<Login />} />
        <Route
          path="*"
          element={
            <RequireSession>
              <Suspense fallback={<p className="muted page-loading">Opening the console…</p>}>
                <ConsoleRoutes />
              </Suspense>
            </RequireSession>
          }
        />
      </Routes>
    </HashRouter>
  );
}
