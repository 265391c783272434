// The console frame: a header with the signed-in user and Sign out, and the navigation to the
// console's views. Views not built yet are listed as "coming soon", never as working links.
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";

// In the order an agent's day meets them; each becomes a route as it is built.
const VIEWS = ["Agent", "Queues", "Recordings", "Texting", "Supervisor", "Admin", "Settings"] as const;

export function Console() {
  const { session, signOut } = useAppStore(useShallow((state) => ({ session: state.session, signOut: state.signOut })));
  const desktop = window.desktop;

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
          {VIEWS.map((view) => (
            <li key={view}>
              <span className="nav-item" aria-disabled="true">
                <span>{view}</span>
                <span className="badge">Coming soon</span>
              </span>
            </li>
          ))}
        </ul>
      </nav>

      <main className="console-main">
        <h1>Console</h1>
        <p>You are signed in. The agent, queue and supervisor views will appear in the menu as they become available.</p>
        <p className="muted">
          {desktop !== undefined ? `Desktop app ${desktop.version} on ${desktop.platform}` : "Running in a browser tab"}
        </p>
      </main>
    </div>
  );
}
