// The Settings view: which server the console talks to (local by default, or a remote service).
// Changes take effect at the next sign-in, when the console connects again.
import { ConnectionSettings } from "../components/ConnectionSettings.js";

export function Settings() {
  return (
    <section aria-labelledby="settings-heading">
      <h1 id="settings-heading">Settings</h1>
      <h2>Server</h2>
      <p className="muted">The console uses these addresses from the next sign-in on.</p>
      <ConnectionSettings />
    </section>
  );
}
