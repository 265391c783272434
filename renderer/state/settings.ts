// The settings slice: where the console's server lives. Every address defaults to the page's own
// origin, because the server that serves the console also serves the API, SIP and events; remote
// mode sets the API base and, where the service lays them out differently, the other three.
import type { StateCreator } from "zustand/vanilla";
import { endpointsOf, normalizeServerUrl, normalizeSocketUrl, type ServerEndpoints } from "../api/endpoints.js";
import type { AppState } from "./store.js";
import { readStored, writeStored, type KeyValueStorage } from "./storage.js";

export { normalizeServerUrl } from "../api/endpoints.js";

/** Addresses set by hand; those left out follow from the API base. */
export type EndpointOverrides = Partial<Pick<ServerEndpoints, "sip" | "events" | "texting">>;

/** The connection settings form: empty fields mean "the default". */
export type EndpointsDraft = Record<keyof ServerEndpoints, string>;

export interface SettingsSlice {
  /** Base URL of the API, without a trailing slash (= endpoints.api). */
  serverUrl: string;
  /** Whether serverUrl is the page's origin rather than a chosen address. */
  serverUrlIsDefault: boolean;
  endpoints: ServerEndpoints;
  endpointOverrides: EndpointOverrides;
  /** Sets the server address, or returns to the default when given "". Returns an error text or null. */
  setServerUrl(address: string): string | null;
  /** Sets all four addresses at once; answers the fields in error (nothing changes then) or null. */
  setEndpoints(draft: EndpointsDraft): Partial<Record<keyof ServerEndpoints, string>> | null;
  /** The supervisor's "alert sound": a queue alert that fires on the board plays a tone. */
  alertSound: boolean;
  setAlertSound(on: boolean): void;
}

export interface SettingsDeps {
  storage: KeyValueStorage;
  /** `location.origin` of the page; "null" for file:// pages. */
  pageOrigin: string;
}

const SERVER_URL_KEY = "switchboard.serverUrl";
const OVERRIDES_KEY = "switchboard.endpoints";
const ALERT_SOUND_KEY = "switchboard.alertSound";

// The desktop app's local server, for pages without a usable origin (file://, about:blank).
const LOCAL_SERVER = "http://127.0.0.1:8000";

export function createSettingsSlice(deps: SettingsDeps): StateCreator<AppState, [], [], SettingsSlice> {
  const fallback = normalizeServerUrl(deps.pageOrigin) ?? LOCAL_SERVER;
  const storedValue = readStored(deps.storage, SERVER_URL_KEY);
  const stored = typeof storedValue === "string" ? normalizeServerUrl(storedValue) : null;
  const initialOverrides = parseOverrides(readStored(deps.storage, OVERRIDES_KEY));
  const api = stored ?? fallback;

  return (set, get) => {
    function apply(url: string, overrides: EndpointOverrides): void {
      // The default is not stored, so a console later served from elsewhere follows its own origin.
      const isDefault = url === fallback;
      writeStored(deps.storage, SERVER_URL_KEY, isDefault ? null : url);
      writeStored(deps.storage, OVERRIDES_KEY, Object.keys(overrides).length === 0 ? null : overrides);
      set({ serverUrl: url, serverUrlIsDefault: isDefault, endpoints: { ...endpointsOf(url), ...overrides }, endpointOverrides: overrides });
    }

    return {
      serverUrl: api,
      serverUrlIsDefault: stored === null || stored === fallback,
      endpoints: { ...endpointsOf(api), ...initialOverrides },
      endpointOverrides: initialOverrides,
      alertSound: readStored(deps.storage, ALERT_SOUND_KEY) === true,

      setAlertSound(on) {
        // Off is the default, so it is not stored.
        writeStored(deps.storage, ALERT_SOUND_KEY, on ? true : null);
        set({ alertSound: on });
      },

      setServerUrl(address) {
        const trimmed = address.trim();
        const url = trimmed === "" ? fallback : normalizeServerUrl(trimmed);
        if (url === null) return "Enter the server address as http://host:port or https://host.";
        apply(url, get().endpointOverrides);
        return null;
      },

      setEndpoints(draft) {
        const errors: Partial<Record<keyof ServerEndpoints, string>> = {};
        const apiText = draft.api.trim();
        const url = apiText === "" ? fallback : normalizeServerUrl(apiText);
        if (url === null) errors.api = "Enter the API address as http://host:port or https://host.";
        const overrides: EndpointOverrides = {};
        for (const key of ["sip", "events"] as const) {
          const text = draft[key].trim();
          if (text === "") continue;
          const value = normalizeSocketUrl(text);
          if (value === null) errors[key] = "Enter a WebSocket address as ws://host:port/path or wss://host/path.";
          else overrides[key] = value;
        }
        const texting = draft.texting.trim();
        if (texting !== "") {
          const value = normalizeServerUrl(texting);
          if (value === null) errors.texting = "Enter the texting address as http://host:port or https://host.";
          else overrides.texting = value;
        }
        if (url === null || Object.keys(errors).length > 0) return errors;
        // An address equal to its default is not an override: it would stop following the API base.
        const derived = endpointsOf(url);
        for (const key of ["sip", "events", "texting"] as const) if (overrides[key] === derived[key]) delete overrides[key];
        apply(url, overrides);
        return null;
      },
    };
  };
}

function parseOverrides(value: unknown): EndpointOverrides {
  if (typeof value !== "object" || value === null) return {};
  const out: EndpointOverrides = {};
  for (const key of ["sip", "events"] as const) {
    const text: unknown = Reflect.get(value, key);
    const url = typeof text === "string" ? normalizeSocketUrl(text) : null;
    if (url !== null) out[key] = url;
  }
  const texting: unknown = Reflect.get(value, "texting");
  const url = typeof texting === "string" ? normalizeServerUrl(texting) : null;
  if (url !== null) out.texting = url;
  return out;
}
