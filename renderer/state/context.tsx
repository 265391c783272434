// Hands the store to React: a provider for the app's root and a narrow-selecting hook.
// The store is created outside (main.tsx) so the slices never reach for window themselves.
import { createContext, useContext, type ReactNode } from "react";
import { useStore } from "zustand";
import type { AppState, AppStore } from "./store.js";

const StoreContext = createContext<AppStore | null>(null);

export function StoreProvider({ store, children }: { store: AppStore; children: ReactNode }) {
  return <StoreContext.Provider value={store}>{children}</StoreContext.Provider>;
}

/** The store itself, for handlers that read the state at the moment they run. */
export function useAppStoreApi(): AppStore {
  const store = useContext(StoreContext);
  if (store === null) throw new Error("useAppStoreApi needs a StoreProvider above it");
  return store;
}

export function useAppStore<T>(selector: (state: AppState) => T): T {
  const store = useContext(StoreContext);
  if (store === null) throw new Error("useAppStore needs a StoreProvider above it");
  return useStore(store, selector);
}
