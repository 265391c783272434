// The console frame: a header with the signed-in user and Sign out, the navigation to the
// console's views and the view itself. CONSOLE_VIEWS is the one list of views: the navigation and
// the routes (App.tsx) both come from it. To add a view, import it and add one line below.
import type { ReactNode } from "react";
import { NavLink, Outlet } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import type { AppState } from "../state/store.js";
import { Settings } from "./Settings.js";

export interface ConsoleView {
  /** The route under /, without a slash. */
  path: string;
  label: string;
  element: ReactNode;
  /** Who sees it (admins, supervisors); everyone when absent. */
  visible?: (state: AppState) => boolean;
}

// In the order an agent's day meets them.
export const CONSOLE_VIEWS: ConsoleView[] = [
  { path: "settings", label: "Settings", element: <Settings /> },
];

export function Console() {
  const { session, signOut } = useAppStore(useShallow((state) => ({ session: state.session, signOut: state.signOut })));
  const views = useAppStore(useShallow((state) => CONSOLE_VIEWS.filter((view) => view.visible?.(state) ?? true)));

  return (
    <div className="console">
      <header className="console-header">
        <p className="brand">Switchboard</p>
        <div className="console-user">
          {session !== null ? (
            <p>
              <span className="visually-hidden">Signed in as </span>
              <strong>{session.username}</strong>
              <span className="muted"> on {session.accountName}</span>
            </p>
          ) : null}
          <button type="button" className="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>

      <nav className="console-nav" aria-label="Console views">
        <ul>
          {views.map((view) => (
            <li key={view.path}>
              <NavLink to={`/${view.path}`} className="nav-item">
                {view.label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>

      <main className="console-main" id="main">
        <Outlet />
      </main>
    </div>
  );
}
