// The settings slice: where the console's server lives. It defaults to the page's own origin,
// because the server that serves the console also serves the API, and remote mode overrides it.
import type { StateCreator } from "zustand/vanilla";
import type { AppState } from "./store.js";
import { readStored, writeStored, type KeyValueStorage } from "./storage.js";

export interface SettingsSlice {
  /** Base URL of the API, without a trailing slash. */
  serverUrl: string;
  /** Whether serverUrl is the page's origin rather than a chosen address. */
  serverUrlIsDefault: boolean;
  /** Sets the server address, or returns to the default when given "". Returns an error text or null. */
  setServerUrl(address: string): string | null;
}

export interface SettingsDeps {
  storage: KeyValueStorage;
  /** `location.origin` of the page; "null" for file:// pages. */
  pageOrigin: string;
}

const SERVER_URL_KEY = "switchboard.serverUrl";

// The desktop app's local server, for pages without a usable origin (file://, about:blank).
const LOCAL_SERVER = "http://127.0.0.1:8000";

export function createSettingsSlice(deps: SettingsDeps): StateCreator<AppState, [], [], SettingsSlice> {
  const fallback = normalizeServerUrl(deps.pageOrigin) ?? LOCAL_SERVER;
  const storedValue = readStored(deps.storage, SERVER_URL_KEY);
  const stored = typeof storedValue === "string" ? normalizeServerUrl(storedValue) : null;

  return (set) => ({
    serverUrl: stored ?? fallback,
    serverUrlIsDefault: stored === null || stored === fallback,
    setServerUrl(address) {
      const trimmed = address.trim();
      const url = trimmed === "" ? fallback : normalizeServerUrl(trimmed);
      if (url === null) return "Enter the server address as http://host:port or https://host.";
      // The default is not stored, so a console later served from elsewhere follows its own origin.
      const isDefault = url === fallback;
      writeStored(deps.storage, SERVER_URL_KEY, isDefault ? null : url);
      set({ serverUrl: url, serverUrlIsDefault: isDefault });
      return null;
    },
  });
}

/** An http(s) URL without query, fragment or trailing slash; null when the text is not one. */
export function normalizeServerUrl(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}
