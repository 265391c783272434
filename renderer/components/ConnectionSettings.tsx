// The connection settings form: the API base URL and, for a hosted service laid out differently
// from the local server, the SIP WebSocket, event websocket and texting addresses. Empty fields
// follow the API address; an empty API address means the server this page came from.
import { useState, type FormEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import { endpointsOf } from "../api/endpoints.js";
import { useAppStore } from "../state/context.js";
import type { EndpointsDraft } from "../state/settings.js";
import { TextField } from "./TextField.js";

const FIELDS: { key: keyof EndpointsDraft; label: string; name: string }[] = [
  { key: "api", label: "API base URL", name: "api_url" },
  { key: "sip", label: "SIP WebSocket URL", name: "sip_url" },
  { key: "events", label: "Event websocket URL", name: "events_url" },
  { key: "texting", label: "Texting URL", name: "texting_url" },
];

export function ConnectionSettings({ onSaved }: { onSaved?: () => void }) {
  const { serverUrl, serverUrlIsDefault, overrides, setEndpoints } = useAppStore(
    useShallow((state) => ({
      serverUrl: state.serverUrl,
      serverUrlIsDefault: state.serverUrlIsDefault,
      overrides: state.endpointOverrides,
      setEndpoints: state.setEndpoints,
    })),
  );
  const [draft, setDraft] = useState<EndpointsDraft>({
    api: serverUrlIsDefault ? "" : serverUrl,
    sip: overrides.sip ?? "",
    events: overrides.events ?? "",
    texting: overrides.texting ?? "",
  });
  const [errors, setErrors] = useState<Partial<Record<keyof EndpointsDraft, string>>>({});
  const [saved, setSaved] = useState(false);

  let placeholders: EndpointsDraft;
  try {
    placeholders = endpointsOf(draft.api.trim() === "" ? serverUrl : draft.api.trim());
  } catch {
    placeholders = endpointsOf(serverUrl);
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const problems = setEndpoints(draft);
    setErrors(problems ?? {});
    setSaved(problems === null);
    if (problems === null) onSaved?.();
  }

  return (
    <form className="connection-settings" onSubmit={submit} aria-label="Connection settings" noValidate>
      {FIELDS.map((field) => (
        <TextField
          key={field.key}
          label={field.label}
          name={field.name}
          type="url"
          inputMode="url"
          spellCheck={false}
          placeholder={field.key === "api" ? `${placeholders.api} (this page's server)` : placeholders[field.key]}
          hint={errors[field.key] ?? (field.key === "api" ? "Leave empty to use the server this page came from." : "Leave empty to follow the API address.")}
          aria-invalid={errors[field.key] !== undefined}
          value={draft[field.key]}
          onChange={(event) => {
            setSaved(false);
            setDraft({ ...draft, [field.key]: event.target.value });
          }}
        />
      ))}
      <button type="submit" className="button">
        Save server settings
      </button>
      <p role="status" className="muted settings-status">
        {saved ? "Server settings saved." : ""}
      </p>
    </form>
  );
}
