// The sign-in view: account name, username and password, the server it signs in to (with the
// connection settings for remote mode), and the reason when sign-in fails. Signed-in visitors go on
// to the route they came from (after a token expired, the view they were working in).
import { useEffect, useState, type FormEvent } from "react";
import { Navigate, useLocation } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import { ConnectionSettings } from "../components/ConnectionSettings.js";
import type { ReturnTo } from "../components/RequireSession.js";
import { TextField } from "../components/TextField.js";
import { askNotificationPermission } from "../phone/alerts.js";
import { useAppStore } from "../state/context.js";

export function Login() {
  const { signedIn, remembered, expired, signingIn, signInError, serverUrl, signIn } = useAppStore(
    useShallow((state) => ({
      signedIn: state.session !== null,
      remembered: state.remembered,
      expired: state.expiredSession,
      signingIn: state.signingIn,
      signInError: state.signInError,
      serverUrl: state.serverUrl,
      signIn: state.signIn,
    })),
  );
  const location = useLocation();
  const returnTo = isReturnTo(location.state) ? location.state.from : "/";
  const [accountName, setAccountName] = useState(expired?.accountName ?? remembered?.accountName ?? "");
  const [username, setUsername] = useState(expired?.username ?? remembered?.username ?? "");
  const [password, setPassword] = useState("");
  const [remember, setRemember] = useState(true);
  const demoPassword = useDemoPassword();
  const known = expired !== null || remembered !== null;

  if (signedIn) return <Navigate to={returnTo} replace />;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (signingIn) return;
    // Asked here, from the agent's own click: browsers ignore asks that come out of nowhere.
    askNotificationPermission();
    void signIn({ accountName, username, password }, { remember });
  }

  const error = signInError;

  return (
    <main className="login">
      <form className="login-card" onSubmit={submit} aria-labelledby="login-heading" noValidate>
        <h1 id="login-heading">Sign in to Switchboard</h1>
        {expired !== null ? (
          <p className="notice" role="status">
            Your session has ended. Sign in again to carry on where you were; your phone stays connected meanwhile.
          </p>
        ) : null}

        {demoPassword !== null ? (
          <p className="field-hint" data-testid="demo-password">
            Demo account on this computer: account <span className="mono">demo</span>, users admin, agent1 to agent3 and
            supervisor, password <span className="mono">{demoPassword}</span>
          </p>
        ) : null}

        <TextField
          label="Account name"
          name="account_name"
          autoComplete="organization"
          value={accountName}
          onChange={(event) => setAccountName(event.target.value)}
          required
          autoFocus={!known}
        />
        <TextField
          label="Username"
          name="username"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          value={username}
          onChange={(event) => setUsername(event.target.value)}
          required
        />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(event) => setPassword(event.target.value)}
          required
          autoFocus={known}
        />

        <div className="checkbox">
          <input
            id="remember-login"
            type="checkbox"
            checked={remember}
            onChange={(event) => setRemember(event.target.checked)}
            aria-describedby="remember-login-hint"
          />
          <div>
            <label htmlFor="remember-login">Remember me on this computer</label>
            <p id="remember-login-hint" className="field-hint">
              Keeps the account and username filled in, never the password.
            </p>
          </div>
        </div>

        {error !== null ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}

        {/* aria-disabled rather than disabled: a disabled button drops keyboard focus to the page. */}
        <button type="submit" className="button button-primary" aria-disabled={signingIn}>
          {signingIn ? "Signing in…" : "Sign in"}
        </button>

      </form>
      <details className="login-card server-details">
        <summary>
          Server: <span className="mono">{serverUrl}</span>
        </summary>
        <ConnectionSettings />
      </details>
    </main>
  );
}

function isReturnTo(value: unknown): value is ReturnTo {
  return typeof value === "object" && value !== null && typeof Reflect.get(value, "from") === "string";
}

/**
 * The desktop app's own demo password (random per install, readable by this user only), from the
 * preload; null in a browser tab, where the server's documented password or the admin's apply.
 */
function useDemoPassword(): string | null {
  const [password, setPassword] = useState<string | null>(null);
  useEffect(() => {
    const ask = window.desktop?.demoPassword;
    if (ask === undefined) return;
    let current = true;
    ask().then(
      (value) => {
        if (current) setPassword(value);
      },
      // Not shown is the whole of the failure: signing in works as it always did.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, []);
  return password;
}
