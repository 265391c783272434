// The console's one store, built from slice creators; each slice owns its state and actions.
// Dependencies (storage, page origin, the auth API) come in from outside so tests can fake them.
import { createStore } from "zustand/vanilla";
import type { AuthApi } from "../api/client.js";
import { createSessionSlice, type SessionSlice } from "./session.js";
import { createSettingsSlice, type SettingsSlice } from "./settings.js";
import type { KeyValueStorage } from "./storage.js";

export type AppState = SessionSlice & SettingsSlice;

export interface StoreDeps {
  storage: KeyValueStorage;
  pageOrigin: string;
  auth: AuthApi;
}

export function createAppStore(deps: StoreDeps) {
  return createStore<AppState>()((...args) => ({
    ...createSettingsSlice(deps)(...args),
    ...createSessionSlice(deps)(...args),
  }));
}

export type AppStore = ReturnType<typeof createAppStore>;
