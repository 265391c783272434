// The console's one store, built from slice creators; each slice owns its state and actions.
// Dependencies (storage, page origin, the server's APIs, the phone, the clock) come in from outside
// so tests can fake them. To add a slice: its type to AppState, its creator to createAppStore.
import { createStore } from "zustand/vanilla";
import type { AuthApi } from "../api/client.js";
import { systemClock, type Clock } from "./clock.js";
import { createSessionSlice, type SessionSlice } from "./session.js";
import { createSettingsSlice, type SettingsSlice } from "./settings.js";
import type { KeyValueStorage } from "./storage.js";

export type AppState = SettingsSlice & SessionSlice;

export interface StoreDeps {
  storage: KeyValueStorage;
  pageOrigin: string;
  auth: AuthApi;
  /** Time and timers for every slice; the system clock when absent. */
  clock?: Clock;
}

export function createAppStore(options: StoreDeps) {
  const deps = { ...options, clock: options.clock ?? systemClock };
  return createStore<AppState>()((...args) => ({
    ...createSettingsSlice(deps)(...args),
    ...createSessionSlice(deps)(...args),
  }));
}

export type AppStore = ReturnType<typeof createAppStore>;
