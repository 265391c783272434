// The sign-in view: account name, username and password, the server it signs in to, and the
// reason when sign-in fails. Signed-in visitors are sent on to the console.
import { useState, type FormEvent } from "react";
import { Navigate } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import { TextField } from "../components/TextField.js";
import { useAppStore } from "../state/context.js";

export function Login() {
  const { signedIn, remembered, signingIn, signInError, serverUrl, signIn, setServerUrl } = useAppStore(
    useShallow((state) => ({
      signedIn: state.session !== null,
      remembered: state.remembered,
      signingIn: state.signingIn,
      signInError: state.signInError,
      serverUrl: state.serverUrl,
      signIn: state.signIn,
      setServerUrl: state.setServerUrl,
    })),
  );
  const [accountName, setAccountName] = useState(remembered?.accountName ?? "");
  const [username, setUsername] = useState(remembered?.username ?? "");
  const [password, setPassword] = useState("");
  const [remember, setRemember] = useState(true);
  const [serverDraft, setServerDraft] = useState(serverUrl);
  const [serverError, setServerError] = useState<string | null>(null);

  if (signedIn) return <Navigate to="/" replace />;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (signingIn) return;
    const problem = serverDraft === serverUrl ? null : setServerUrl(serverDraft);
    setServerError(problem);
    if (problem !== null) return;
    void signIn({ accountName, username, password }, { remember });
  }

  const error = serverError ?? signInError;

  return (
    <main className="login">
      <form className="login-card" onSubmit={submit} aria-labelledby="login-heading" noValidate>
        <h1 id="login-heading">Sign in to Switchboard</h1>

        <TextField
          label="Account name"
          name="account_name"
          autoComplete="organization"
          value={accountName}
          onChange={(event) => setAccountName(event.target.value)}
          required
          autoFocus={remembered === null}
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
          autoFocus={remembered !== null}
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

        <details className="server-details" open={serverError !== null ? true : undefined}>
          <summary>
            Server: <span className="mono">{serverUrl}</span>
          </summary>
          <TextField
            label="Server address"
            name="server_url"
            type="url"
            inputMode="url"
            spellCheck={false}
            hint="Leave empty to use the server this page came from."
            value={serverDraft}
            onChange={(event) => setServerDraft(event.target.value)}
          />
        </details>
      </form>
    </main>
  );
}
