// The user's texting integration settings: the account_uid and access token an outside platform
// uses (Bearer <account_uid>:<access_token>), rotating that token, the numbers assigned, and the
// relay URL every message is POSTed to.
import { useState, type FormEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import { TextField } from "../../components/TextField.js";
import { useAppStore } from "../../state/context.js";

export function TextingIntegration() {
  const { settings, error } = useAppStore(useShallow((state) => ({ settings: state.texting.settings, error: state.texting.settingsError })));
  const rotate = useAppStore((state) => state.rotateTextingToken);
  const setRelay = useAppStore((state) => state.setTextingRelayUrl);
  const [relay, setRelayDraft] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  if (settings === null) return null;

  async function saveRelay(event: FormEvent): Promise<void> {
    event.preventDefault();
    setSaved(await setRelay(relay ?? settings?.relayUrl ?? ""));
  }

  return (
    <details className="card texting-integration">
      <summary>Integration settings</summary>
      <dl>
        <dt>Your numbers</dt>
        <dd>{settings.numbers.length > 0 ? settings.numbers.join(", ") : "None: ask an admin to assign one."}</dd>
        <dt>Account UID</dt>
        <dd className="integration-secret">{settings.accountUid}</dd>
        <dt>Access token</dt>
        <dd className="integration-secret">{settings.accessToken}</dd>
      </dl>
      <p className="muted">An outside platform calls the texting API with the header Authorization: Bearer &lt;account UID&gt;:&lt;access token&gt;.</p>
      <p>
        <button type="button" className="button" onClick={() => void rotate()}>
          Issue a new access token
        </button>
      </p>
      {error !== null ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <form onSubmit={(event) => void saveRelay(event)}>
        <TextField
          label="Relay URL"
          hint="Every text you send or receive is POSTed here as JSON; leave empty for none."
          value={relay ?? settings.relayUrl ?? ""}
          onChange={(e) => {
            setRelayDraft(e.target.value);
            setSaved(false);
          }}
        />
        <button type="submit" className="button">
          Save relay URL
        </button>
        {saved ? <span className="muted"> Saved.</span> : null}
      </form>
    </details>
  );
}
